use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{ProblemKind, Schema};

fn schema(s: Value) -> Schema {
    Schema::compile(&s, false).unwrap_or_else(|e| panic!("{s}: {e:?}"))
}

fn errors(s: &Value, v: &Value) -> Vec<String> {
    schema(s.clone()).errors(v, 100).0
}

#[test]
fn failures_are_worded_like_jsonschema_at_their_pointer() {
    let s = json!({
        "type":"object",
        "properties":{
            "a":{"type":"number","minimum":0},
            "tags":{"type":"array","items":{"type":"string","maxLength":2}},
            "mode":{"enum":["fast","slow"]},
            "n":{"type":["integer","null"]}
        },
        "required":["a","b"],
        "additionalProperties":false
    });
    let v = json!({"a":-1,"tags":["ok","long"],"mode":"x","n":1.5,"extra":1,"more":2});
    let found = errors(&s, &v);
    let full = jsonschema::validator_for(&s).unwrap();
    let mut expected: Vec<String> = full
        .iter_errors(&v)
        .map(|e| {
            format!(
                "- at {}: {e}",
                Some(e.instance_path().as_str())
                    .filter(|p| !p.is_empty())
                    .unwrap_or("(root)")
            )
        })
        .collect();
    let mut found_sorted = found.clone();
    found_sorted.sort();
    expected.sort();
    assert_eq!(found_sorted, expected);
    assert!(
        found
            .iter()
            .any(|e| e == "- at (root): \"b\" is a required property"),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|e| e == "- at /a: -1 is less than the minimum of 0"),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|e| e == "- at /tags/1: \"long\" is longer than 2 characters"),
        "{found:?}"
    );
}

#[test]
fn refs_anchors_and_recursion_resolve_inside_the_schema() {
    let tree = json!({
        "$defs":{"node":{"type":"object","properties":{
            "value":{"type":"integer"},
            "children":{"type":"array","items":{"$ref":"#/$defs/node"}}},
            "required":["value"]}},
        "$ref":"#/$defs/node"
    });
    let s = schema(tree.clone());
    assert!(s.is_valid(&json!({"value":1,"children":[{"value":2,"children":[]}]})));
    assert!(!s.is_valid(&json!({"value":1,"children":[{"children":[]}]})));
    let e = errors(&tree, &json!({"value":1,"children":[{"value":"x"}]}));
    assert_eq!(
        e,
        ["- at /children/0/value: \"x\" is not of type \"integer\""]
    );

    let anchored = json!({"$id":"https://example.com/s.json",
        "properties":{"a":{"$ref":"#pos"},"b":{"$ref":"other.json"}},
        "$defs":{"p":{"$anchor":"pos","minimum":0},
                 "o":{"$id":"other.json","type":"string"}}});
    let s = schema(anchored);
    assert!(s.is_valid(&json!({"a":1,"b":"x"})));
    assert!(!s.is_valid(&json!({"a":-1})));
    assert!(!s.is_valid(&json!({"b":1})));

    // Draft 7: the keywords beside a $ref are ignored.
    let d7 = json!({"$schema":"http://json-schema.org/draft-07/schema#",
        "definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","minLength":5});
    assert!(schema(d7).is_valid(&json!("ab")));
    // A loop that never consumes the value fails instead of overflowing.
    assert!(!schema(json!({"$ref":"#"})).is_valid(&json!(1)));
}

#[test]
fn unevaluated_properties_see_through_in_place_applicators() {
    // What schemars derives for a flattened struct with deny_unknown_fields.
    let s = json!({"type":"object","properties":{"a":{"type":"integer"}},
        "allOf":[{"properties":{"b":{"type":"string"}}}],
        "anyOf":[{"properties":{"c":true},"required":["c"]},{"properties":{"d":true}}],
        "unevaluatedProperties":false});
    let compiled = schema(s.clone());
    assert!(compiled.is_valid(&json!({"a":1,"b":"x","c":0})));
    assert!(compiled.is_valid(&json!({"a":1,"d":0})));
    assert!(!compiled.is_valid(&json!({"a":1,"e":0})));
    assert_eq!(
        errors(&s, &json!({"e":0,"f":1})),
        ["- at (root): Unevaluated properties are not allowed ('e', 'f' were unexpected)"]
    );
    let items = schema(
        json!({"prefixItems":[{"type":"integer"}],"contains":{"type":"string"},
        "unevaluatedItems":false}),
    );
    assert!(items.is_valid(&json!([1, "a", "b"])));
    assert!(!items.is_valid(&json!([1, "a", 2])));
}

/// Each problem says where it is: the JSON pointer of the keyword (or
/// subschema) at fault, however deep.
#[test]
fn what_is_left_aside_is_unsupported_and_broken_schemas_are_invalid() {
    let problem = |s: &Value, kind: ProblemKind| {
        let p = Schema::compile(s, false)
            .err()
            .unwrap_or_else(|| panic!("{s} compiled"));
        assert_eq!(p.kind, kind, "{s}: {p}");
        p.to_string()
    };
    for (s, message) in [
        (
            json!({"properties":{"name":{"type":"string","pattern":"\\p{L}+"}}}),
            "at /properties/name/pattern: the pattern \"\\\\p{L}+\" is beyond the built-in \
             regular expressions (Unicode character classes are not supported)",
        ),
        (
            json!({"patternProperties":{"(?=a)":{}}}),
            "at /patternProperties/(?=a): the pattern \"(?=a)\" is beyond the built-in",
        ),
        // Found through the $ref that compiles it, named where it is.
        (
            json!({"items":{"$ref":"#/$defs/a"},"$defs":{"a":{"$ref":"https://example.com/elsewhere.json"}}}),
            "at /$defs/a/$ref: the $ref \"https://example.com/elsewhere.json\" points to \
             another document",
        ),
        (
            json!({"properties":{"a":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}),
            "at /properties/a/$ref: the $ref",
        ),
        (
            json!({"$schema":"https://json-schema.org/draft/2019-09/schema",
                   "properties":{"a":{"$recursiveRef":"#"}}}),
            "at /properties/a/$recursiveRef: $recursiveRef is not built in",
        ),
        (
            json!({"$schema":"http://json-schema.org/draft-04/schema#"}),
            "at /$schema: the $schema \"http://json-schema.org/draft-04/schema#\" is not built in",
        ),
    ] {
        let found = problem(&s, ProblemKind::Unsupported);
        assert!(found.starts_with(message), "{s}: {found}");
    }
    for (s, message) in [
        (json!({"type":12}), "at /type: type must be"),
        (
            json!({"items":{"type":["string","string"]}}),
            "at /items/type:",
        ),
        (json!({"required":["a","a"]}), "at /required:"),
        (json!({"not":{"minLength":-1}}), "at /not/minLength:"),
        (json!({"multipleOf":0}), "at /multipleOf:"),
        (
            json!({"allOf":[]}),
            "at /allOf: allOf must be a non-empty array",
        ),
        (
            json!({"properties":{"a":3}}),
            "at /properties/a: 3 is not a schema",
        ),
        (
            json!({"$ref":"#/$defs/missing"}),
            "at /$ref: the $ref \"#/$defs/missing\" points at nothing",
        ),
        (
            json!({"anyOf":[true,{"$dynamicRef":"#nowhere"}]}),
            "at /anyOf/1/$dynamicRef: the $dynamicRef \"#nowhere\" names no anchor",
        ),
        (json!(3), "at (root): 3 is not a schema"),
    ] {
        let found = problem(&s, ProblemKind::Invalid);
        assert!(found.starts_with(message), "{s}: {found}");
    }
    // Draft 7 formats are left to jsonschema only when it is there to assert them.
    let d7 = json!({"$schema":"http://json-schema.org/draft-07/schema#","type":"string","format":"email"});
    assert!(Schema::compile(&d7, false).is_ok());
    let p = Schema::compile(&d7, true).err().expect("deferred");
    assert_eq!(p.kind, ProblemKind::Unsupported);
    assert!(p.to_string().starts_with("at /format: "), "{p}");
    assert!(Schema::compile(&json!({"type":"string","format":"email"}), true).is_ok());
}

/// `dependencies` (split into `dependentRequired` and `dependentSchemas` by
/// 2019-09) is honoured in 2020-12 too, beside them, as `jsonschema` does.
#[test]
fn dependencies_count_in_every_draft() {
    let s = schema(json!({
        "dependencies":{"a":["b"],"c":{"required":["d"]}},
        "dependentSchemas":{"e":{"required":["f"]}}
    }));
    assert!(s.is_valid(&json!({"a":1,"b":2,"c":3,"d":4,"e":5,"f":6})));
    assert!(!s.is_valid(&json!({"a":1})));
    assert!(!s.is_valid(&json!({"c":1})));
    assert!(!s.is_valid(&json!({"e":1})));
}

/// A `$dynamicRef` goes to the dynamic anchor of the outermost resource the
/// check went through: one generic list, its item type chosen by the schema
/// that uses it.
#[test]
fn dynamic_refs_resolve_in_the_dynamic_scope() {
    let s = json!({
        "$id": "https://example.com/tool",
        "type": "object",
        "properties": {"numbers": {"$ref": "numbers"}, "words": {"$ref": "words"}},
        "$defs": {
            "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#item"},
                     "$defs": {"any": {"$dynamicAnchor": "item"}}},
            "numbers": {"$id": "numbers", "$ref": "list",
                        "$defs": {"item": {"$dynamicAnchor": "item", "type": "number"}}},
            "words": {"$id": "words", "$ref": "list",
                      "$defs": {"item": {"$dynamicAnchor": "item", "type": "string"}}}
        }
    });
    let compiled = schema(s.clone());
    assert!(compiled.is_valid(&json!({"numbers":[1,2],"words":["a"]})));
    assert!(!compiled.is_valid(&json!({"numbers":["a"]})));
    assert_eq!(
        errors(&s, &json!({"numbers":[1,"x"],"words":["a",2]})),
        [
            "- at /numbers/1: \"x\" is not of type \"number\"",
            "- at /words/1: 2 is not of type \"string\""
        ]
    );
}

// ------------------------------------------------ agreement with jsonschema

/// Schemas of the keywords the checker supports, nested a few levels.
fn schemas() -> impl Strategy<Value = Value> {
    let type_name = prop::sample::select(vec![
        "null", "boolean", "integer", "number", "string", "array", "object",
    ]);
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        type_name.clone().prop_map(|t| json!({"type": t})),
        prop::collection::vec(type_name, 1..3).prop_map(|mut ts| {
            ts.sort_unstable();
            ts.dedup();
            json!({"type": ts})
        }),
        (-5i64..5).prop_map(|m| json!({"type":"number","minimum": m})),
        (-5i64..5).prop_map(|m| json!({"exclusiveMaximum": m as f64 + 0.5})),
        (-5i64..5).prop_map(|m| json!({"maximum": m, "exclusiveMinimum": m - 3})),
        Just(json!({"enum":["a","b",null,true,1,[1],{"a":1}]})),
        Just(json!({"const":2})),
        Just(json!({"const":"a"})),
        Just(json!({"multipleOf":0.5})),
        Just(json!({"multipleOf":2})),
        (0u64..3).prop_map(|n| json!({"minLength": n, "maxLength": n + 1})),
        Just(json!({"pattern":"^[ab]+$"})),
        Just(json!({"pattern":"c"})),
        Just(json!({"type":"integer","format":"int32","description":"d"})),
        Just(json!({"format":"email"})),
        Just(json!({"uniqueItems":true})),
        (0u64..3).prop_map(|n| json!({"minProperties": n, "maxProperties": n + 1})),
        Just(json!({"$ref":"#/$defs/num"})),
        Just(json!({"dependentRequired":{"a":["b"]}})),
        Just(json!({"propertyNames":{"maxLength":1}})),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec(("[abc]", inner.clone()), 0..3),
                prop::collection::vec("[abcd]", 0..3),
                prop::option::of(inner.clone()),
            )
                .prop_map(|(props, mut required, additional)| {
                    required.sort();
                    required.dedup();
                    let mut o = json!({"type":"object",
                        "properties": props.into_iter().collect::<Map<_, _>>(),
                        "required": required});
                    if let Some(a) = additional {
                        o["additionalProperties"] = a;
                    }
                    o
                }),
            (inner.clone(), 0u64..3).prop_map(|(i, n)| json!({"items": i, "minItems": n})),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| json!({"prefixItems":[a], "items": b})),
            (inner.clone(), 0u64..3).prop_map(|(c, n)| json!({"contains": c, "maxContains": n})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"anyOf": v})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"oneOf": v})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"allOf": v})),
            inner.clone().prop_map(|v| json!({"not": v})),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(i, t, e)| json!({"if": i, "then": t, "else": e})),
            (("[ab]", inner.clone()), inner.clone()).prop_map(|((name, p), a)| {
                json!({"properties":{name: p},"allOf":[{"properties":{"c": a}}],
                       "unevaluatedProperties":false})
            }),
            (prop::collection::vec(inner, 1..3))
                .prop_map(|v| json!({"patternProperties":{"^a": v[0]}})),
        ]
    })
    .prop_map(|mut s| {
        if let Value::Object(map) = &mut s {
            map.insert("$defs".into(), json!({"num":{"type":"number"}}));
        }
        s
    })
}

fn instances() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-6i64..6).prop_map(|n| json!(n)),
        (-6.0f64..6.0).prop_map(|f| json!(f)),
        Just(json!(2.0)),
        Just(json!(1.5)),
        Just(json!(u64::MAX)),
        prop::sample::select(vec!["a", "b", "c", "", "ab", "abc", "é"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[abcd]", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Valid for one exactly when valid for the other, with as many failures.
    #[test]
    fn agrees_with_jsonschema(s in schemas(), values in prop::collection::vec(instances(), 1..6)) {
        let ours = Schema::compile(&s, false).map_err(|e| TestCaseError::fail(format!("{s}: {e:?}")))?;
        let full = jsonschema::validator_for(&s).expect("a valid schema");
        for value in &values {
            let valid = full.is_valid(value);
            prop_assert_eq!(ours.is_valid(value), valid, "{} on {}", s, value);
            let (_, count) = ours.errors(value, 0);
            prop_assert_eq!(count == 0, valid, "{} on {}: {} failures", s, value, count);
        }
    }
}
