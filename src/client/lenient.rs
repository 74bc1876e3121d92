//! Lenient serde readers for provider JSON: fields that servers fill in many ways (a string or
//! null, a number or a digit string, an object or a plain string) are read without failing the
//! chunk and, on the hot path, without allocating. Shared by every dialect.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;

/// Token usage in either naming (OpenAI `prompt/completion_tokens`, Anthropic `input/output`).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Usage {
    pub prompt_tokens: Count,
    pub completion_tokens: Count,
    pub input_tokens: Count,
    pub output_tokens: Count,
    /// OpenAI: `prompt_tokens_details.cached_tokens` (part of `prompt_tokens`).
    pub prompt_tokens_details: Option<PromptDetails>,
    /// Responses: `input_tokens_details.cached_tokens` (part of `input_tokens`).
    pub input_tokens_details: Option<PromptDetails>,
    /// Anthropic: prompt tokens read from / written to the cache (not part of `input_tokens`).
    pub cache_read_input_tokens: Count,
    pub cache_creation_input_tokens: Count,
    /// OpenAI chat: `completion_tokens_details.reasoning_tokens` (part of `completion_tokens`).
    pub completion_tokens_details: Option<OutputDetails>,
    /// Responses-style: `output_tokens_details.reasoning_tokens` (part of `output_tokens`).
    pub output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct PromptDetails {
    pub cached_tokens: Count,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct OutputDetails {
    pub reasoning_tokens: Count,
}

impl Usage {
    /// Prompt tokens served from the provider's prompt cache, in either naming.
    pub(crate) fn cached_tokens(&self) -> Option<u64> {
        let of = |d: &Option<PromptDetails>| d.as_ref().and_then(|d| d.cached_tokens.0);
        of(&self.prompt_tokens_details)
            .or(of(&self.input_tokens_details))
            .or(self.cache_read_input_tokens.0)
    }

    /// Anthropic: prompt tokens written to the prompt cache (billed at their own price).
    pub(crate) fn cache_write_tokens(&self) -> Option<u64> {
        self.cache_creation_input_tokens.0
    }

    /// Reasoning tokens counted inside the output tokens, in either naming.
    pub(crate) fn reasoning_tokens(&self) -> Option<u64> {
        let of = |d: &Option<OutputDetails>| d.as_ref().and_then(|d| d.reasoning_tokens.0);
        of(&self.completion_tokens_details).or(of(&self.output_tokens_details))
    }

    /// Anthropic's whole prompt: `input_tokens` counts only the uncached part, so cache reads
    /// and writes are added to make it comparable with OpenAI's `prompt_tokens`.
    pub(crate) fn anthropic_input_tokens(&self) -> Option<u64> {
        let base = self.input_tokens.0?;
        let read = self.cache_read_input_tokens.0.unwrap_or(0);
        Some(base + read + self.cache_creation_input_tokens.0.unwrap_or(0))
    }
}

/// A field that is normally an object `T` but may be a plain string (or something else).
pub(crate) enum ObjOrText<T> {
    Obj(T),
    Text(String),
    Other,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjOrText<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = ObjOrText<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object or a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Text(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjOrText<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(ObjOrText::Obj)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ObjOrText<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ObjOrText::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<ObjOrText<T>, E> {
                Ok(ObjOrText::Other)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Whether a field is the string `"error"`, compared without copying; any other value is not.
#[derive(Default, Clone, Copy)]
pub(crate) struct ErrorTag(pub bool);

impl<'de> Deserialize<'de> for ErrorTag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ErrorTag;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ErrorTag, E> {
                Ok(ErrorTag(v == "error"))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ErrorTag, E> {
                Ok(ErrorTag(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ErrorTag, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ErrorTag(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ErrorTag, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ErrorTag(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether a field holds something generated: a non-empty string (or non-empty list/object).
/// Reads without allocating; `null`, `""`, numbers and booleans are "nothing".
#[derive(Default, Clone, Copy)]
pub(crate) struct NonEmpty(pub bool);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NonEmpty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NonEmpty, E> {
                Ok(NonEmpty(!v.is_empty()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NonEmpty, A::Error> {
                let mut any = false;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(NonEmpty(any))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NonEmpty, A::Error> {
                let mut any = false;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(NonEmpty(any))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_unit<E: de::Error>(self) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// A token count: a non-negative integer (or integral float, or digit string); anything else
/// (null, negative, text) reads as "not reported" instead of failing the chunk.
#[derive(Default, Clone, Copy)]
pub(crate) struct Count(pub Option<u64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Scalar::deserialize(d)? {
            Scalar::Num(n) if n >= 0.0 && n.fract() == 0.0 && n < 1e19 => Count(Some(n as u64)),
            Scalar::Int(n) => Count(u64::try_from(n).ok()),
            Scalar::Text(t) => Count(t.trim().parse().ok()),
            _ => Count(None),
        })
    }
}

/// Any JSON value reduced to what error fields need: text, a number, or "something else".
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    Text(String),
    Int(i64),
    Num(f64),
    Other,
}

impl Scalar {
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Scalar::Text(t) => Some(t),
            _ => None,
        }
    }

    /// An HTTP-like status (100..=599) given as a number or a digit string.
    pub(crate) fn status(&self) -> Option<u16> {
        let n = match self {
            Scalar::Int(n) => u16::try_from(*n).ok(),
            Scalar::Num(n) if n.fract() == 0.0 && (100.0..600.0).contains(n) => Some(*n as u16),
            Scalar::Text(t) => t.trim().parse().ok(),
            _ => None,
        }?;
        (100..=599).contains(&n).then_some(n)
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(i64::try_from(v).map_or(Scalar::Num(v as f64), Scalar::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Num(v))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}
