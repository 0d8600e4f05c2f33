use serde_json::json;

use super::*;

#[test]
fn text_a_lax_validator_reads_as_an_integer_is_understood_and_nothing_else() {
    let cases: &[(&str, Option<i64>)] = &[
        ("11", Some(11)),
        (" 11 ", Some(11)),
        ("\t+11\n", Some(11)),
        ("-11", Some(-11)),
        ("011", Some(11)),
        ("1_1", Some(11)),
        ("11.0", Some(11)),
        ("11.", Some(11)),
        ("1.1e1", Some(11)),
        ("110E-1", Some(11)),
        ("0x0b", Some(11)),
        ("0X0B", Some(11)),
        ("0o13", Some(11)),
        ("0b1011", Some(11)),
        ("-0", Some(0)),
        ("9223372036854775807", Some(i64::MAX)),
        ("11.5", None),
        ("1e400", None),
        ("9223372036854775808", None),
        ("", None),
        ("  ", None),
        ("eleven", None),
        ("11a", None),
        ("1__1", None),
        ("_11", None),
        ("11_", None),
        ("1.2.3", None),
        ("1e1e1", None),
        ("0x", None),
        ("nan", None),
        ("inf", None),
        ("v11", None),
        ("1-1", None),
    ];
    for (text, want) in cases {
        assert_eq!(integer_text(text), *want, "{text:?}");
    }
}

#[test]
fn text_a_lax_validator_reads_as_a_boolean_is_understood() {
    for (text, want) in [
        ("true", Some(true)),
        (" YES ", Some(true)),
        ("on", Some(true)),
        ("0", Some(false)),
        ("Off", Some(false)),
    ] {
        assert_eq!(bool_text(text), want, "{text:?}");
    }
    for text in ["", "truthy", "maybe", "2", "nope"] {
        assert_eq!(bool_text(text), None, "{text:?}");
    }
}

#[test]
fn each_ambiguous_value_multiplies_the_readings_and_the_literal_one_comes_first() {
    let count = |v: serde_json::Value| readings(&v).map(|r| r.len());
    assert_eq!(count(json!({"a": "x", "b": 7, "c": 11.5})), Ok(1));
    assert_eq!(count(json!({"a": "11"})), Ok(2));
    assert_eq!(count(json!({"a": "1"})), Ok(3), "text, 1, true");
    assert_eq!(count(json!({"a": true, "b": "11"})), Ok(4));
    assert_eq!(count(json!({"a": ["11", "12"]})), Ok(4));
    assert_eq!(count(json!({"a": 11.0})), Ok(1), "an integral number has one reading: 11");
    let many: serde_json::Map<String, serde_json::Value> =
        (0..7).map(|i| (format!("k{i}"), json!("5"))).collect();
    assert_eq!(count(serde_json::Value::Object(many)), Err(Unjudged::Ambiguous(MAX_READINGS)));
}

proptest::proptest! {
    #[test]
    fn every_integer_spelled_as_text_or_as_a_float_reads_as_itself(n in -(1i64 << 52)..(1i64 << 52)) {
        proptest::prop_assert_eq!(integer_text(&n.to_string()), Some(n));
        proptest::prop_assert_eq!(integer_text(&format!(" {n}.0 ")), Some(n));
        proptest::prop_assert_eq!(integral(n as f64), Some(n));
    }
}
