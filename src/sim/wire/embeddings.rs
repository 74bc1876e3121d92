//! The simulator's embeddings answer: `{"object": "list", "data": [{"object": "embedding",
//! "index": i, "embedding": [...]}], "model", "usage": {"prompt_tokens", "total_tokens"}}`, one
//! deterministic vector per input text (the same text position gives the same vector), its
//! floats written as JSON numbers or, with `encoding_format: base64`, as base64 of
//! little-endian float32s, as OpenAI sends them. Pure.

use std::fmt::Write;

/// What the answer holds: texts, vector size, encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub inputs: u32,
    pub dimensions: u32,
    pub base64: bool,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            inputs: 1,
            dimensions: 384,
            base64: false,
        }
    }
}

/// Component `j` of input `i`'s vector: a fixed pattern in [-1, 1] with 3 decimals.
pub fn component(i: u32, j: u32) -> f32 {
    let x = (i.wrapping_mul(2_654_435_761) ^ j.wrapping_mul(40_503)) % 2001;
    (x as f32 - 1000.0) / 1000.0
}

/// The answer's JSON text for `shape`, `model_json` (the model as JSON text) and the request's
/// input tokens.
pub fn body(shape: &Shape, model_json: &str, input_tokens: u64) -> String {
    let per_vector = if shape.base64 {
        shape.dimensions as usize * 4 * 4 / 3 + 8
    } else {
        shape.dimensions as usize * 7
    };
    let mut s = String::with_capacity(128 + shape.inputs as usize * (per_vector + 48));
    s.push_str("{\"object\":\"list\",\"data\":[");
    for i in 0..shape.inputs {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{{\"object\":\"embedding\",\"index\":{i},\"embedding\":");
        if shape.base64 {
            let bytes: Vec<u8> = (0..shape.dimensions)
                .flat_map(|j| component(i, j).to_le_bytes())
                .collect();
            s.push('"');
            base64_into(&bytes, &mut s);
            s.push('"');
        } else {
            s.push('[');
            for j in 0..shape.dimensions {
                if j > 0 {
                    s.push(',');
                }
                let _ = write!(s, "{}", component(i, j));
            }
            s.push(']');
        }
        s.push('}');
    }
    let _ = write!(
        s,
        "],\"model\":{model_json},\"usage\":{{\"prompt_tokens\":{input_tokens},\"total_tokens\":{input_tokens}}}}}"
    );
    s
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with `=` padding.
fn base64_into(bytes: &[u8], out: &mut String) {
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * k)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn base64_matches_the_standard_encoding() {
        let mut s = String::new();
        base64_into(
            &[1.0f32, 2.0, 3.0, 4.0].map(f32::to_le_bytes).concat(),
            &mut s,
        );
        assert_eq!(s, "AACAPwAAAEAAAEBAAACAQA==");
        for (bytes, want) in [(&b"f"[..], "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v")] {
            let mut s = String::new();
            base64_into(bytes, &mut s);
            assert_eq!(s, want);
        }
    }

    #[test]
    fn one_vector_per_input_in_floats_or_base64() {
        let shape = Shape {
            inputs: 3,
            dimensions: 8,
            base64: false,
        };
        let v: Value = serde_json::from_str(&body(&shape, "\"m\"", 12)).unwrap();
        assert_eq!(v["object"], "list");
        assert_eq!(v["model"], "m");
        assert_eq!(v["usage"]["prompt_tokens"], 12);
        assert_eq!(v["usage"]["total_tokens"], 12);
        let data = v["data"].as_array().unwrap();
        assert_eq!(data.len(), 3);
        for (i, d) in data.iter().enumerate() {
            assert_eq!(d["object"], "embedding");
            assert_eq!(d["index"], i);
            let e = d["embedding"].as_array().unwrap();
            assert_eq!(e.len(), 8);
            assert_eq!(e[5].as_f64().unwrap() as f32, component(i as u32, 5));
        }
        let b64 = Shape {
            base64: true,
            ..shape
        };
        let v: Value = serde_json::from_str(&body(&b64, "\"m\"", 12)).unwrap();
        let e = v["data"][2]["embedding"].as_str().unwrap();
        // 8 float32s are 32 bytes: 44 base64 characters.
        assert_eq!(e.len(), 44);
        assert!(e.ends_with('='));
    }
}
