//! Binary values in messages: how bytes and URL objects are written in the JSON the core works
//! on and the archives keep, so that they come back as what they were.
//!
//! JSON has no bytes. `JSON.stringify` writes a `Uint8Array` as an object of numbered keys
//! (`{"0":137,"1":80,…}`), an `ArrayBuffer` as `{}` and a `URL` as its text, so messages of the
//! AI SDK (`image` / `file` parts with `Uint8Array`, `ArrayBuffer`, `Buffer` or `URL` data), of
//! Bedrock (`source.bytes`, a `Uint8Array` in the AWS SDK) and of any SDK that takes bytes would
//! not come back from an archive as they were, nor be counted as the image they are. So the
//! Node.js binding writes such a value as a tagged object, and the JS layer turns it back:
//!
//! - bytes: `{"$bytes": "<base64 of the bytes>", "$type": "<JS type>"}`, the type one of
//!   `Uint8Array`, `Buffer`, `ArrayBuffer`, the other typed arrays (the bytes of the view);
//! - a `URL` object: `{"$url": "<href>"}` (a URL given as a string stays a string);
//! - an object of the caller's own with a key that is a tag's (`$bytes`, `$url`, or one of
//!   those with more `$` before it) gets one more `$` before that key, so no data of the
//!   caller's ever reads as a tag ([`escape_key`]; the JS layer takes the `$` away again).
//!
//! The core reads the tags where a message format holds media (the format views'
//! `media_block`): the bytes are the image, PDF or audio they are, counted by their header as
//! the provider bills them, never as a digit-keyed object.

use serde_json::Value;

/// The key of a tagged byte value: the bytes in standard base64.
pub const BYTES_KEY: &str = "$bytes";
/// The key of the JS type beside [`BYTES_KEY`].
pub const TYPE_KEY: &str = "$type";
/// The key of a tagged `URL` object: its `href`.
pub const URL_KEY: &str = "$url";

/// The tagged value of `bytes` whose JS type is `js_type` (see the module docs).
pub fn tag_bytes(bytes: &[u8], js_type: &str) -> Value {
    use base64::Engine;
    let mut tag = serde_json::Map::new();
    tag.insert(
        BYTES_KEY.into(),
        Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
    );
    tag.insert(TYPE_KEY.into(), Value::String(js_type.into()));
    Value::Object(tag)
}

/// The tagged value of a `URL` object whose `href` is `href`.
pub fn tag_url(href: String) -> Value {
    let mut tag = serde_json::Map::new();
    tag.insert(URL_KEY.into(), Value::String(href));
    Value::Object(tag)
}

/// The base64 bytes of a tagged byte value.
pub fn tagged_bytes(value: &Value) -> Option<&str> {
    value.as_object()?.get(BYTES_KEY)?.as_str()
}

/// The href of a tagged `URL` object.
pub fn tagged_url(value: &Value) -> Option<&str> {
    value.as_object()?.get(URL_KEY)?.as_str()
}

/// A key of the caller's written so that it cannot read as a tag: `$bytes` → `$$bytes`,
/// `$$url` → `$$$url`; any other key as it is (`None`).
pub fn escape_key(key: &str) -> Option<String> {
    let name = key.trim_start_matches('$');
    let dollars = key.len() - name.len();
    (dollars > 0 && (name == "bytes" || name == "url")).then(|| format!("${key}"))
}

/// The caller's key back from [`escape_key`]: one `$` less on an escaped tag key (`None`: the
/// key as it is).
pub fn unescape_key(key: &str) -> Option<&str> {
    let name = key.trim_start_matches('$');
    let dollars = key.len() - name.len();
    (dollars > 1 && (name == "bytes" || name == "url")).then(|| &key[1..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_are_read_and_caller_keys_never_read_as_one() {
        let png = json!({"$bytes": "iVBORw0KGgo=", "$type": "Uint8Array"});
        assert_eq!(tagged_bytes(&png), Some("iVBORw0KGgo="));
        assert_eq!(
            tagged_url(&json!({"$url": "https://x/a.png"})),
            Some("https://x/a.png")
        );
        assert_eq!(tagged_bytes(&json!({"bytes": "x"})), None);
        assert_eq!(
            tag_bytes(&[137, 80, 78, 71], "Uint8Array"),
            json!({"$bytes": "iVBORw==", "$type": "Uint8Array"})
        );
        assert_eq!(tag_url("https://x/".into()), json!({"$url": "https://x/"}));
        for (key, escaped) in [
            ("$bytes", "$$bytes"),
            ("$$bytes", "$$$bytes"),
            ("$url", "$$url"),
        ] {
            assert_eq!(escape_key(key).as_deref(), Some(escaped));
            assert_eq!(unescape_key(escaped), Some(key));
        }
        for key in ["$type", "bytes", "url", "$bytesX", "a$bytes", "", "$"] {
            assert_eq!(escape_key(key), None, "{key}");
        }
        assert_eq!(unescape_key("$bytes"), None);
        assert_eq!(unescape_key("$type"), None);
    }
}
