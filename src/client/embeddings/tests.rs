//! The embeddings body and reader against answers in OpenAI's shape.

use super::*;
use crate::client::test_spec;
use serde_json::json;

fn answer(data: Value) -> Vec<u8> {
    json!({"object": "list", "data": data, "model": "text-embedding-3-small",
           "usage": {"prompt_tokens": 12, "total_tokens": 12}})
    .to_string()
    .into_bytes()
}

fn vector(index: u64, embedding: Value) -> Value {
    json!({"object": "embedding", "index": index, "embedding": embedding})
}

#[test]
fn one_text_is_sent_as_a_string_a_batch_as_a_list_and_extra_body_goes_on_top() {
    let mut spec = test_spec();
    spec.extra_body.insert("dimensions".into(), json!(256));
    spec.extra_body
        .insert("encoding_format".into(), json!("base64"));
    let body = embeddings_body("m", &spec);
    assert_eq!(
        body,
        json!({"model": "m", "input": "Say hi", "dimensions": 256, "encoding_format": "base64"})
    );
    // No output limit, no stream, no sampling: an embedding generates nothing.
    for field in ["max_tokens", "stream", "stream_options", "temperature"] {
        assert!(body.get(field).is_none(), "{field}");
    }
    spec.batch = 3;
    assert_eq!(
        embeddings_body("m", &spec)["input"],
        json!(["Say hi", "Say hi", "Say hi"])
    );
    spec.inputs = vec!["a".into(), "b".into(), "c".into()];
    assert_eq!(embeddings_body("m", &spec)["input"], json!(["a", "b", "c"]));
}

#[test]
fn a_good_answer_carries_its_input_tokens_and_no_output() {
    let body = answer(json!([
        vector(1, json!([0.1, -0.2, 3e-5])),
        vector(0, json!([0.0, 1, 2])),
    ]));
    let info = whole_embeddings(&body, 2).unwrap();
    assert!(info.content && info.done && info.error.is_none());
    assert_eq!((info.input_tokens, info.output_tokens), (Some(12), Some(0)));
    assert_eq!(info.finish_reason, None);
    // Without usage: no token count at all, and still a success.
    let bare = json!({"data": [vector(0, json!([1.0]))]}).to_string();
    let info = whole_embeddings(bare.as_bytes(), 1).unwrap();
    assert!(info.content && info.input_tokens.is_none() && info.output_tokens.is_none());
}

#[test]
fn base64_vectors_are_measured_not_decoded() {
    // struct.pack('<3f', .1, .2, .3) and ('<4f', 1, 2, 3, 4), base64.
    let body = answer(json!([
        vector(0, json!("zczMPc3MTD6amZk+")),
        vector(1, json!("zczMPc3MTD6amZk+")),
    ]));
    assert!(whole_embeddings(&body, 2).unwrap().content);
    assert_eq!(base64_floats("AACAPwAAAEAAAEBAAACAQA=="), Ok(4));
    assert_eq!(base64_floats("zczMPc3MTD4="), Ok(2));
    // Sizes must agree, base64 or not.
    let body = answer(json!([
        vector(0, json!("zczMPc3MTD6amZk+")),
        vector(1, json!("AACAPwAAAEAAAEBAAACAQA==")),
    ]));
    let err = whole_embeddings(&body, 2).unwrap_err().0;
    assert!(err.contains("differ in size (3 and 4"), "{err}");
    for bad in ["not base64!", "zczMPc3M", "zczMPc3MTD"] {
        let body = answer(json!([vector(0, json!(bad))]));
        let err = whole_embeddings(&body, 1).unwrap_err().0;
        assert!(err.starts_with("vector 0: "), "{bad}: {err}");
    }
}

#[test]
fn one_vector_per_input_or_the_answer_is_malformed() {
    let one = answer(json!([vector(0, json!([0.5, 0.5]))]));
    let err = whole_embeddings(&one, 4).unwrap_err().0;
    assert!(
        err.contains("holds 1 vectors for 4 inputs; one vector per input"),
        "{err}"
    );
    let err = whole_embeddings(&answer(json!([])), 1).unwrap_err().0;
    assert!(err.contains("holds 0 vectors for 1 input;"), "{err}");
    let twice = answer(json!([vector(0, json!([1])), vector(0, json!([1]))]));
    let err = whole_embeddings(&twice, 2).unwrap_err().0;
    assert!(err.contains("two vectors have index 0"), "{err}");
    let outside = answer(json!([vector(0, json!([1])), vector(2, json!([1]))]));
    let err = whole_embeddings(&outside, 2).unwrap_err().0;
    assert!(
        err.contains("index 2, outside the 2 inputs (0 to 1)"),
        "{err}"
    );
    let empty = answer(json!([vector(0, json!([]))]));
    let err = whole_embeddings(&empty, 1).unwrap_err().0;
    assert!(
        err.contains("vector 0 of the embeddings answer is empty"),
        "{err}"
    );
}

#[test]
fn vectors_per_token_are_said_to_be_unpooled() {
    let body = answer(json!([vector(0, json!([[0.1, 0.2], [0.3, 0.4]]))]));
    let err = whole_embeddings(&body, 1).unwrap_err().0;
    assert!(err.contains("one vector per token, not per input"), "{err}");
    let body = answer(json!([vector(0, json!(["a", "b"]))]));
    assert!(whole_embeddings(&body, 1).is_err());
}

#[test]
fn a_vector_without_its_index_or_its_embedding_is_malformed() {
    let body = answer(json!([{"object": "embedding", "embedding": [1.0, 2.0]}]));
    let err = whole_embeddings(&body, 1).unwrap_err().0;
    assert!(
        err.contains("vector 0 of the embeddings answer has no `index`"),
        "{err}"
    );
    let body = answer(json!([{"object": "embedding", "index": 0}]));
    let err = whole_embeddings(&body, 1).unwrap_err().0;
    assert!(err.contains("is empty"), "{err}");
}

#[test]
fn an_error_body_is_an_in_band_error_and_other_json_is_malformed() {
    let body = json!({"error": {"message": "This model does not support embeddings.",
                                "type": "invalid_request_error", "param": null, "code": null}});
    let info = whole_embeddings(body.to_string().as_bytes(), 1).unwrap();
    let err = info.error.unwrap();
    assert_eq!(err.message, "This model does not support embeddings.");
    assert_eq!(err.error_type.as_deref(), Some("invalid_request_error"));
    assert!(!info.content);
    // A chat completion where vectors were expected, and a body that is not JSON.
    let chat = json!({"object": "chat.completion", "choices": []}).to_string();
    let err = whole_embeddings(chat.as_bytes(), 1).unwrap_err().0;
    assert!(err.contains("no `data` list of vectors"), "{err}");
    assert!(whole_embeddings(b"{\"data\": [", 1).is_err());
    assert!(whole_embeddings(b"<html>", 1).is_err());
}

#[test]
fn the_vectors_are_never_kept() {
    // A 3,072-dimension answer is read through the size-only visitor: the facts kept per vector
    // are its index and its length.
    assert!(std::mem::size_of::<Item>() <= 64);
    let v: Vec<f64> = (0..3072).map(|i| f64::from(i) / 3072.0).collect();
    let body = answer(json!([vector(0, json!(v))]));
    assert!(whole_embeddings(&body, 1).unwrap().content);
}
