//! The layers of the binary crate, bottom up, and the test that holds the code to them: a module
//! imports only modules of lower layers (never its own layer's, never a higher one's), so no
//! import circle can form between modules and the structure `docs/architecture.md` draws is the
//! one the code has. Imports are read from the source as text (`crate::name` outside comments
//! and test modules), the way a reviewer reads them.

/// Bottom up. A module's place is the lowest layer above everything it imports.
pub const LAYERS: &[&[&str]] = &[
    // Leaves: validated settings (config owns every one of them), the outcome vocabulary.
    // Decision ids are made with every call and cited in its refusal.
    // `heap` gives the allocator's free pages back after a load drains (its figures are read
    // by telemetry).
    &["config", "decision", "heap", "inert", "outcome", "read_mostly", "says"],
    // `connect` writes clients' configurations from the validated config alone; `sandbox`
    // reads the postures it asks for.
    &["connect", "oauth", "sandbox"],
    // `/readyz`'s look at the upstreams: a TCP connect to each, from the config alone.
    &["readiness"],
    // What the user's own words ask for (read from a channel the agent does not control).
    &["identity", "intent"],
    &["call", "telemetry"],
    // Held credentials: masked in results, swapped into arguments (the audit masks with them).
    &["secrets"],
    // Where replicas share state, then what the proxy remembers and records (the flow index
    // is shared through the state store).
    &["state"],
    &["audit", "flows", "session"],
    // Layer 2, the per-agent rate limits (counters here or in the state store), and the
    // authority evaluator that may add a denial to Layer 1's decision.
    &["authority", "guardrails", "limits"],
    // Tool definitions: versions, pins, screening.
    &["tooldefs"],
    &["approval"],
    // The per-exchange decisions.
    &["gate"],
    // The process state every transport shares.
    &["runtime"],
    // Transports and the offline entrances.
    &["check", "proxy", "reload", "stdio"],
    // `explain` reads what the audit kept, through the runtime's guard.
    &["explain", "hook", "pins", "upstream"],
    &["admin"],
    &["app"],
    // The offline entrances that start a whole proxy: the demo, and eval's trace replay.
    &["demo", "eval"],
];

#[cfg(test)]
mod tests {
    use super::LAYERS;
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    fn layer_of(module: &str) -> Option<usize> {
        LAYERS.iter().position(|l| l.contains(&module))
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }

    /// The source without comments and without its inline `mod tests { … }`.
    fn code(text: &str) -> String {
        let text = match text.find("#[cfg(test)]\nmod tests {") {
            Some(i) => &text[..i],
            None => text,
        };
        text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
    }

    /// The top-level modules `text` names (`crate::x`, and `x` inside `use crate::{…}`).
    fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        let mut rest = text;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    let name = part.trim().split("::").next().unwrap_or("").trim();
                    found.insert(name.to_owned());
                }
            } else {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                found.insert(name);
            }
        }
        found.retain(|m| modules.contains(m));
        found
    }

    /// Module → the modules it imports, read from `src/`.
    fn graph() -> BTreeMap<String, BTreeSet<String>> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let modules: BTreeSet<String> = std::fs::read_dir(&src)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let name = name.strip_suffix(".rs").map(str::to_owned).unwrap_or(name);
                (e.path().is_dir() || e.path().extension().is_some_and(|x| x == "rs")).then_some(name)
            })
            .filter(|m| !["main", "lib", "layers"].contains(&m.as_str()))
            .collect();
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in files {
            let rel = f.strip_prefix(&src).unwrap();
            let top = rel.components().next().unwrap().as_os_str().to_string_lossy();
            let top = top.strip_suffix(".rs").unwrap_or(&top).to_owned();
            let name = f.file_name().unwrap().to_string_lossy();
            if !modules.contains(&top) || name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            let mut found = imports(&code(&text), &modules);
            found.remove(&top);
            graph.entry(top).or_default().extend(found);
        }
        graph
    }

    #[test]
    fn every_module_has_a_layer() {
        let missing: Vec<String> = graph().into_keys().filter(|m| layer_of(m).is_none()).collect();
        assert!(missing.is_empty(), "modules not placed in LAYERS: {missing:?}");
    }

    #[test]
    fn every_import_runs_down_the_layers() {
        let mut upward = Vec::new();
        for (module, imported) in graph() {
            let Some(own) = layer_of(&module) else { continue };
            for i in imported {
                match layer_of(&i) {
                    Some(l) if l < own => {}
                    _ => upward.push(format!("{module} imports {i}")),
                }
            }
        }
        assert!(upward.is_empty(), "imports that do not run down the layers: {upward:#?}");
    }

    #[test]
    fn the_reader_sees_imports_in_every_spelling_it_must() {
        let modules: BTreeSet<String> = ["gate", "config", "audit"].iter().map(|s| s.to_string()).collect();
        let text = code(
            "use crate::gate::Guard;\nuse crate::{config::X, audit};\n// crate::proxy in a comment\nfn f() { crate::audit::f() }",
        );
        let found = imports(&text, &modules);
        assert_eq!(found, modules);
    }
}
