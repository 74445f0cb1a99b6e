//! A JSON object's members read as untrusted input (a bundle's manifest, a line of the history's store):
//! each checked for its kind and its size, and an error is one line naming the member.

use serde_json::{Map, Value};

/// The longest string read, bytes; and the most strings in a list.
pub const MAX_STRING: usize = 4096;

/// Member `key` of `o` (at `at`, a prefix naming where `o` is): a string of at most [`MAX_STRING`] bytes.
pub fn string(o: &Map<String, Value>, key: &str, at: &str) -> Result<String, String> {
    let s = o
        .get(key)
        .and_then(Value::as_str)
        .ok_or(format!("{at}{key}: missing or not a string"))?;
    if s.len() > MAX_STRING {
        return Err(format!("{at}{key}: longer than {MAX_STRING} bytes"));
    }
    Ok(s.to_owned())
}

/// Member `key` of `o`: a string as [`string`] reads it, or `null` or absent.
pub fn optional(o: &Map<String, Value>, key: &str, at: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => string(o, key, at).map(Some),
    }
}

/// Member `key` of `o`: a whole number, 0 to 2^64 - 1.
pub fn unsigned(o: &Map<String, Value>, key: &str, at: &str) -> Result<u64, String> {
    o.get(key)
        .and_then(Value::as_u64)
        .ok_or(format!("{at}{key}: missing or not a whole number"))
}

/// `v`, member `key`: a list of at most [`MAX_STRING`] strings of at most [`MAX_STRING`] bytes each.
pub fn strings(v: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    let list = v
        .and_then(Value::as_array)
        .ok_or(format!("{key}: missing or not a list of strings"))?;
    if list.len() > MAX_STRING {
        return Err(format!("{key}: more than {MAX_STRING} words"));
    }
    list.iter()
        .map(|s| match s.as_str() {
            Some(s) if s.len() <= MAX_STRING => Ok(s.to_owned()),
            Some(_) => Err(format!("{key}: a word longer than {MAX_STRING} bytes")),
            None => Err(format!("{key}: not a list of strings")),
        })
        .collect()
}

/// Member `key` of `o`: `true` or `false`.
pub fn boolean(o: &Map<String, Value>, key: &str, at: &str) -> Result<bool, String> {
    o.get(key)
        .and_then(Value::as_bool)
        .ok_or(format!("{at}{key}: missing or not true/false"))
}
