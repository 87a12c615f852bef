//! Prints the public API of a library crate from its rustdoc JSON, one item a
//! line, sorted (the `public-api` library of cargo-public-api renders it).
//! `scripts/api-check` builds the JSON and compares the listing with the
//! committed one in `api/`.
//!
//! Usage: `api-listing <crate.json>` prints the listing;
//! `api-listing --count <crate.json>` prints how many lines the listing has
//! and what they are (see [`counts`]).

use std::io::Write;
use std::process::ExitCode;

use public_api::PublicItem;
use rustdoc_types::{Crate, Id, ItemEnum};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (count, path) = match args.as_slice() {
        [path] if !path.starts_with('-') => (false, path),
        [flag, path] if flag == "--count" => (true, path),
        _ => {
            eprintln!("usage: api-listing [--count] <rustdoc JSON file>");
            return ExitCode::from(2);
        }
    };
    let result = if count {
        counts(path)
    } else {
        print_listing(path)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("api-listing: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}

type Error = Box<dyn std::error::Error>;

fn print_listing(path: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    for item in listing(path)?.items() {
        writeln!(out, "{item}")?;
    }
    Ok(())
}

/// The public API, without the lines that say nothing about this crate:
/// blanket impls (`impl<T> From<T> for T` and a dozen more for every type),
/// and impls of the marker traits that stable Rust cannot name (`Freeze`,
/// `UnsafeUnpin`, `StructuralPartialEq`: they come and go with the toolchain).
/// The auto traits a user relies on (`Send`, `Sync`, `Unpin`, the unwind-safety
/// ones) stay: losing one breaks users.
fn listing(path: &str) -> Result<Listing, Error> {
    let text = std::fs::read_to_string(path)?;
    check_format(&text)?;
    let api = public_api::Builder::from_rustdoc_json(path)
        .omit_blanket_impls(true)
        .build()?;
    let items = api
        .into_items()
        .filter(|item| !is_unstable_marker_impl(&item.to_string()))
        .collect();
    Ok(Listing { text, items })
}

struct Listing {
    /// The rustdoc JSON the items come from.
    text: String,
    items: Vec<PublicItem>,
}

impl Listing {
    fn items(&self) -> impl Iterator<Item = &PublicItem> {
        self.items.iter()
    }
}

/// An impl of a marker trait that only the standard library or the compiler
/// names (each type gets it, with a `!` where it does not hold).
fn is_unstable_marker_impl(line: &str) -> bool {
    const UNSTABLE: [&str; 3] = [
        "core::marker::Freeze for ",
        "core::marker::UnsafeUnpin for ",
        "core::marker::StructuralPartialEq for ",
    ];
    line.starts_with("impl")
        && UNSTABLE
            .iter()
            .any(|name| line.contains(&format!(" {name}")) || line.contains(&format!(" !{name}")))
}

/// Prints how many lines the listing has and what they are: the items the
/// crate declares, split into those with a path of their own (modules, types,
/// traits, functions, constants, statics, macros, re-exports) and their
/// members (fields, variants, methods, associated items); then the trait impls
/// (with the members they list) and the inherent impl blocks (`impl Type`,
/// whose methods count as members).
fn counts(path: &str) -> Result<(), Error> {
    let listing = listing(path)?;
    let krate: Crate = serde_json::from_str(&listing.text)?;
    let inner = |id: &Id| krate.index.get(id).map(|item| &item.inner);
    let trait_impl = |id: &Id| matches!(inner(id), Some(ItemEnum::Impl(i)) if i.trait_.is_some());
    let (mut paths, mut members, mut impls, mut impl_members, mut blocks) = (0, 0, 0, 0, 0);
    for item in listing.items() {
        let parent = item.parent_id();
        match inner(&item.id()) {
            Some(ItemEnum::Impl(i)) if i.trait_.is_some() => impls += 1,
            Some(ItemEnum::Impl(_)) => blocks += 1,
            _ if parent.as_ref().is_some_and(trait_impl) => impl_members += 1,
            Some(
                ItemEnum::StructField(_)
                | ItemEnum::Variant(_)
                | ItemEnum::AssocConst { .. }
                | ItemEnum::AssocType { .. },
            ) => members += 1,
            // A function is a method when it sits in an impl or a trait.
            Some(ItemEnum::Function(_))
                if parent.as_ref().is_some_and(|p| {
                    matches!(inner(p), Some(ItemEnum::Impl(_) | ItemEnum::Trait(_)))
                }) =>
            {
                members += 1;
            }
            _ => paths += 1,
        }
    }
    println!(
        "{} lines: {} items declared ({paths} with a path of their own, {members} members), \
         {impls} trait impls (listing {impl_members} members), {blocks} inherent impl blocks",
        listing.items.len(),
        paths + members,
    );
    Ok(())
}

/// Fails unless the JSON is in the format the library reads: another format
/// may parse and still render differently, and the listing would change with
/// the toolchain instead of with the API.
fn check_format(text: &str) -> Result<(), String> {
    // The top-level field, the last one rustdoc writes. No string in the JSON
    // can hold `"format_version":` (its quotes would be escaped).
    let found = text
        .rfind("\"format_version\":")
        .map(|at| &text[at + "\"format_version\":".len()..])
        .and_then(|rest| {
            let digits = rest.trim_start();
            let end = digits
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(digits.len());
            digits[..end].parse::<u32>().ok()
        });
    match found {
        Some(v) if v == rustdoc_types::FORMAT_VERSION => Ok(()),
        Some(v) => Err(format!(
            "rustdoc JSON format {v}, but public-api here reads format {} (rustdoc 1.95); \
             use that toolchain, or move public-api and rustdoc-types in \
             crates/api-listing/Cargo.toml to the versions that read format {v}",
            rustdoc_types::FORMAT_VERSION
        )),
        None => Err("no `format_version`: not rustdoc JSON".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unstable_marker_impls_are_recognised() {
        for line in [
            "impl core::marker::Freeze for a::B",
            "impl !core::marker::Freeze for a::B",
            "impl<T> core::marker::UnsafeUnpin for a::B<T>",
            "impl core::marker::StructuralPartialEq for a::B",
        ] {
            assert!(is_unstable_marker_impl(line), "{line}");
        }
        for line in [
            "impl core::marker::Send for a::B",
            "impl !core::marker::Sync for a::B",
            "pub fn a::Freeze::new() -> a::Freeze",
            "impl core::clone::Clone for a::Freeze",
        ] {
            assert!(!is_unstable_marker_impl(line), "{line}");
        }
    }

    #[test]
    fn only_the_format_the_library_reads_passes() {
        let v = rustdoc_types::FORMAT_VERSION;
        assert_eq!(
            check_format(&format!(r#"{{"root":0,"format_version":{v}}}"#)),
            Ok(())
        );
        // A doc comment that quotes the field, escaped as JSON escapes it.
        let quoted = format!(r#"{{"docs":"\"format_version\":1","format_version":{v}}}"#);
        assert_eq!(check_format(&quoted), Ok(()));
        let newer = check_format(&format!(r#"{{"format_version":{}}}"#, v + 1));
        assert!(newer.unwrap_err().contains(&format!("format {}", v + 1)));
        assert!(check_format(r#"{"root":0}"#).is_err());
    }
}
