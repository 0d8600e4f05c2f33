//! Results → sentinels: every spelling of a held value in a result's strings (and keys) becomes
//! its secret's sentinel, before anything else reads the result.

use serde_json::Value;

use super::Held;

impl Held {
    /// `text` with every held value's spelling replaced by its sentinel; `None` when it holds
    /// none (one automaton pass, no allocation).
    pub fn mask_str(&self, text: &str) -> Option<String> {
        let mut hits = self.values.find_iter(text).peekable();
        hits.peek()?;
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for m in hits {
            out.push_str(&text[at..m.start()]);
            out.push_str(self.sentinel(self.owner[m.pattern().as_usize()]));
            at = m.end();
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    /// Masks a result in place: text blobs (an embedded resource, a resource read) where a
    /// client decodes them, then every string and key. Returns how many were changed.
    pub fn mask_result(&self, result: &mut Value) -> usize {
        let mut in_blobs = 0;
        crate::checker::content::rewrite_text_blobs(result, &mut |text| match self.mask_str(text) {
            Some(new) => {
                in_blobs += 1;
                Some(Some(new))
            }
            None => Some(None),
        });
        in_blobs + self.mask_value(result)
    }

    /// Masks every string and object key in `v`, in place; returns how many were changed.
    pub fn mask_value(&self, v: &mut Value) -> usize {
        match v {
            Value::String(s) => match self.mask_str(s) {
                Some(new) => {
                    *s = new;
                    1
                }
                None => 0,
            },
            Value::Array(items) => items.iter_mut().map(|i| self.mask_value(i)).sum(),
            Value::Object(map) => {
                let mut n = 0;
                if map.keys().any(|k| self.holds_value(k)) {
                    let old = std::mem::take(map);
                    for (k, val) in old {
                        let key = match self.mask_str(&k) {
                            Some(masked) => {
                                n += 1;
                                masked
                            }
                            None => k,
                        };
                        map.insert(key, val);
                    }
                }
                n + map.values_mut().map(|i| self.mask_value(i)).sum::<usize>()
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use serde_json::json;

    use crate::secrets::held::tests::held;

    #[test]
    fn every_spelling_in_strings_and_keys_becomes_the_sentinel() {
        let h = held();
        let b64 = base64::engine::general_purpose::STANDARD.encode("ghp_Zq8LmN3vT0xY");
        let mut v = json!({
            "text": "token ghp_Zq8LmN3vT0xY and again ghp_Zq8LmN3vT0xY",
            "ghp_Zq8LmN3vT0xY": 1,
            "nested": [{"b64": b64}, "sk-live-0000aaaa", 7, null],
            "clean": "nothing here"
        });
        assert_eq!(h.mask_value(&mut v), 4);
        assert_eq!(
            v,
            json!({
                "text": "token portcullis:secret:github and again portcullis:secret:github",
                "portcullis:secret:github": 1,
                "nested": [{"b64": "portcullis:secret:github"}, "portcullis:secret:stripe", 7, null],
                "clean": "nothing here"
            })
        );
        assert_eq!(h.mask_str("nothing"), None);
    }

    proptest::proptest! {
        #[test]
        fn no_masked_text_holds_the_value_in_any_searched_spelling(
            before in "\\PC{0,24}",
            after in "\\PC{0,24}",
            how in 0usize..5,
        ) {
            let h = held();
            let value = "ghp_Zq8LmN3vT0xY";
            let plain = format!("{before}{value}{after}");
            let text = match how {
                0 => plain.clone(),
                1 => plain.to_ascii_uppercase(),
                2 => base64::engine::general_purpose::STANDARD.encode(&plain),
                3 => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&plain),
                _ => plain.bytes().map(|b| format!("{b:02x}")).collect(),
            };
            let masked = h.mask_str(&text).expect("a spelling was found");
            let lower = masked.to_ascii_lowercase();
            proptest::prop_assert!(!lower.contains(&value.to_ascii_lowercase()), "{}", masked);
            proptest::prop_assert!(masked.contains("portcullis:secret:github"));
        }
    }

    #[test]
    fn a_value_split_by_json_escapes_is_masked_once_decoded() {
        let h = held();
        let mut v: serde_json::Value = serde_json::from_str(r#"{"t":"gh\u0070_Zq8LmN3vT0xY"}"#).unwrap();
        assert_eq!(h.mask_value(&mut v), 1);
        assert_eq!(v["t"], "portcullis:secret:github");
    }
}
