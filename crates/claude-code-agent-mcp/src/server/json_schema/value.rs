//! JSON values as JSON Schema compares them: numbers by value (`1` equals
//! `1.0`, a big integer is not rounded), objects regardless of member order;
//! and the small URI and JSON-pointer handling `$ref` needs.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// Equality as `enum`, `const` and `uniqueItems` mean it.
pub(super) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A JSON number as an exact integer, when it is one that fits.
fn as_int(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Compares two numbers exactly (no rounding of big integers to `f64`).
pub(super) fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_int(a), as_int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => cmp_int_float(x, b.as_f64()?),
        (None, Some(y)) => cmp_int_float(y, a.as_f64()?).map(Ordering::reverse),
        (None, None) => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    const LIMIT: f64 = 1.7e38; // inside i128's range
    if f.is_nan() {
        return None;
    }
    if f >= LIMIT {
        return Some(Ordering::Less);
    }
    if f <= -LIMIT {
        return Some(Ordering::Greater);
    }
    let floor = f.floor();
    // An integral f64 in range converts to i128 exactly.
    let whole = floor as i128;
    Some(match i.cmp(&whole) {
        Ordering::Equal if f > floor => Ordering::Less,
        other => other,
    })
}

/// Whether a number counts as an integer (`3.0` does, since draft 6).
pub(super) fn is_integer(n: &Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// `multipleOf`: exact for integers and for decimals of a few digits (`0.3` is
/// a multiple of `0.1`), `f64` division beyond that.
pub(super) fn is_multiple_of(value: &Number, multiple: &Number) -> bool {
    if let (Some(v), Some(m)) = (as_int(value), as_int(multiple))
        && m > 0
    {
        return v % m == 0;
    }
    let (Some(v), Some(m)) = (value.as_f64(), multiple.as_f64()) else {
        return false;
    };
    if v == 0.0 {
        return true;
    }
    if let (Some((vm, vd)), Some((mm, md))) = (decimal(v), decimal(m))
        && mm != 0
    {
        // v / m = (vm * 10^md) / (mm * 10^vd); cancel the shared power first.
        let shared = vd.min(md);
        let scale =
            |mantissa: i128, places: u32| mantissa.checked_mul(10_i128.checked_pow(places)?);
        if let (Some(a), Some(b)) = (scale(vm, md - shared), scale(mm, vd - shared)) {
            return a % b == 0;
        }
    }
    let q = v / m;
    q.is_finite() && q.fract() == 0.0
}

/// `f64` as `mantissa × 10^-decimals`, from its shortest decimal form.
fn decimal(f: f64) -> Option<(i128, u32)> {
    if !f.is_finite() {
        return None;
    }
    let text = format!("{f:e}");
    let (digits, exp) = text.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let negative = digits.starts_with('-');
    let digits = digits.trim_start_matches('-');
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let mut mantissa: i128 = format!("{int}{frac}").parse().ok()?;
    let mut decimals = i32::try_from(frac.len()).ok()? - exp;
    while decimals < 0 {
        mantissa = mantissa.checked_mul(10)?;
        decimals += 1;
    }
    if negative {
        mantissa = -mantissa;
    }
    Some((mantissa, u32::try_from(decimals).ok()?))
}

/// A JSON pointer token, escaped (`~` as `~0`, `/` as `~1`).
pub(super) fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// `%XX` escapes of a URI fragment decoded (`None` if that is not UTF-8).
pub(super) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `reference` resolved against `base` (RFC 3986 in the forms schemas use:
/// absolute, fragment only, absolute path, relative path, with `.` and `..`
/// segments), fragment kept.
pub(super) fn resolve_uri(base: &str, reference: &str) -> String {
    let base = base.split_once('#').map_or(base, |(b, _)| b);
    if has_scheme(reference) {
        return remove_dot_segments(reference.to_owned());
    }
    if reference.starts_with('#') || reference.is_empty() {
        return format!("{base}{reference}");
    }
    if let Some(rest) = reference.strip_prefix("//") {
        let scheme = base.split_once(':').map_or("", |(s, _)| s);
        return remove_dot_segments(format!("{scheme}://{rest}"));
    }
    if reference.starts_with('/') {
        return remove_dot_segments(format!("{}{reference}", &base[..authority_end(base)]));
    }
    let dir = base.rfind('/').map_or_else(
        || base.find(':').map_or("", |i| &base[..=i]),
        |i| &base[..=i],
    );
    remove_dot_segments(format!("{dir}{reference}"))
}

/// Where the path of `uri` starts: after `scheme://authority`, or after
/// `scheme:`.
fn authority_end(uri: &str) -> usize {
    uri.find("://")
        .map(|i| i + 3 + uri[i + 3..].find('/').unwrap_or(uri.len() - i - 3))
        .unwrap_or_else(|| uri.find(':').map_or(0, |i| i + 1))
}

/// The `.` and `..` segments of an absolute path resolved (RFC 3986,
/// section 5.2.4): `a/b/./c/../d` names `a/b/d`.
fn remove_dot_segments(uri: String) -> String {
    let end = uri.find('#').unwrap_or(uri.len());
    let start = authority_end(&uri[..end]);
    let path = &uri[start..end];
    if !path.starts_with('/') || !path.split('/').any(|s| s == "." || s == "..") {
        return uri;
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut kept: Vec<&str> = vec![""];
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => {}
            ".." => {
                if kept.len() > 1 {
                    kept.pop();
                }
            }
            s => kept.push(s),
        }
        // `a/.` and `a/..` name directories: the trailing `/` stays.
        if i + 1 == segments.len() && matches!(*segment, "." | "..") {
            kept.push("");
        }
    }
    format!("{}{}{}", &uri[..start], kept.join("/"), &uri[end..])
}

fn has_scheme(s: &str) -> bool {
    let Some(colon) = s.find(':') else {
        return false;
    };
    let scheme = &s[..colon];
    !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// A URI without an empty trailing fragment (`x#` names `x`).
pub(super) fn normalize(uri: &str) -> &str {
    uri.strip_suffix('#').unwrap_or(uri)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_big_integers_exactly() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(json_eq(
            &json!({"a":[1,{"b":2.0}]}),
            &json!({"a":[1.0,{"b":2}]})
        ));
        assert!(!json_eq(&json!(u64::MAX), &json!(u64::MAX as f64)));
        let n = |v: Value| v.as_number().unwrap().clone();
        assert_eq!(
            cmp_numbers(&n(json!(3)), &n(json!(2.5))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            cmp_numbers(&n(json!(-3)), &n(json!(-2.5))),
            Some(Ordering::Less)
        );
        assert_eq!(
            cmp_numbers(&n(json!(2.5)), &n(json!(2))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            cmp_numbers(&n(json!(2)), &n(json!(2.0))),
            Some(Ordering::Equal)
        );
    }

    #[test]
    fn multiple_of_is_exact_for_short_decimals() {
        let n = |v: Value| v.as_number().unwrap().clone();
        assert!(is_multiple_of(&n(json!(0.3)), &n(json!(0.1))));
        assert!(is_multiple_of(&n(json!(10)), &n(json!(2.5))));
        assert!(!is_multiple_of(&n(json!(0.35)), &n(json!(0.1))));
        assert!(is_multiple_of(&n(json!(12)), &n(json!(4))));
        assert!(!is_multiple_of(&n(json!(13)), &n(json!(4))));
        assert!(is_multiple_of(&n(json!(1e300)), &n(json!(1e299))));
    }

    #[test]
    fn uris_resolve_like_rfc_3986_for_the_usual_forms() {
        let base = "https://example.com/schemas/a.json";
        assert_eq!(
            resolve_uri(base, "#/x"),
            "https://example.com/schemas/a.json#/x"
        );
        assert_eq!(
            resolve_uri(base, "b.json#f"),
            "https://example.com/schemas/b.json#f"
        );
        assert_eq!(resolve_uri(base, "/c.json"), "https://example.com/c.json");
        assert_eq!(
            resolve_uri("https://example.com/a/nested/foo.json", "./bar.json#x"),
            "https://example.com/a/nested/bar.json#x"
        );
        assert_eq!(
            resolve_uri(base, "../up/./b.json"),
            "https://example.com/up/b.json"
        );
        assert_eq!(
            resolve_uri(base, "/../c.json"),
            "https://example.com/c.json"
        );
        assert_eq!(resolve_uri(base, "x/.."), "https://example.com/schemas/");
        assert_eq!(resolve_uri(base, "urn:x"), "urn:x");
        assert_eq!(resolve_uri("urn:root", "#a"), "urn:root#a");
        assert_eq!(percent_decode("a%25b%7E").as_deref(), Some("a%b~"));
    }
}
