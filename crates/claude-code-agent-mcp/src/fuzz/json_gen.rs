//! Structured JSON from fuzzer bytes (`server_handle`, and the SDK's
//! `control_decoder`): values whose keys and strings come mostly from a
//! dictionary, so decoders get past their tag checks.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// A string: a dictionary word most of the time, else arbitrary text.
pub fn string(u: &mut Unstructured, words: &[&str]) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(words)?).to_owned())
    } else {
        u.arbitrary()
    }
}

/// A number of any of serde_json's three kinds, with edge cases.
pub fn number(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=6)? {
        0 => Value::from(u.int_in_range(0..=3u8)?),
        1 => Value::from(u.arbitrary::<i64>()?),
        2 => Value::from(u.arbitrary::<u64>()?),
        // Integral floats (`1.0`) are where a lossless decoder can slip.
        3 => Value::from(f64::from(u.int_in_range(-3..=3i8)?)),
        4 => Value::from(f64::from(u.arbitrary::<i32>()?) + 0.5),
        5 => Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        _ => Value::from(*u.choose(&[1u64 << 53, (1 << 53) + 1, u64::MAX, u32::MAX as u64 + 1])?),
    })
}

/// Any JSON value, nested at most `depth` levels.
pub fn value(u: &mut Unstructured, words: &[&str], depth: u32) -> Result<Value> {
    let top = if depth == 0 { 4 } else { 7 };
    Ok(match u.int_in_range(0..=top)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => number(u)?,
        3 | 4 => Value::String(string(u, words)?),
        5 => {
            let n = u.int_in_range(0..=4)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(value(u, words, depth - 1)?);
            }
            Value::Array(items)
        }
        _ => object(u, words, depth - 1)?,
    })
}

/// A JSON object of up to 8 entries.
pub fn object(u: &mut Unstructured, words: &[&str], depth: u32) -> Result<Value> {
    let n = u.int_in_range(0..=8)?;
    let mut map = Map::new();
    for _ in 0..n {
        let key = string(u, words)?;
        map.insert(key, value(u, words, depth)?);
    }
    Ok(Value::Object(map))
}
