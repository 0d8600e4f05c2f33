//! One simple command's pieces, decoded: words, assignments, redirections, and the code that
//! rides along in them (command and process substitutions) for the walker to analyse.
//!
//! Expansions found while decoding become opacity on the command (`$x` → dynamic, `$(…)` →
//! substitution), so nothing the shell would compute at run time passes as literal text.

use brush_parser::ast;

use super::subscript;
use super::word::{decode, decode_heredoc, expand, Word};
use super::{Opacity, Redirect, RedirectKind};

/// The pieces of one simple command, decoded.
#[derive(Default)]
pub(crate) struct Parts<'a> {
    pub words: Vec<Word>,
    pub assignments: Vec<(String, String)>,
    pub redirects: Vec<Redirect>,
    pub opaque: Vec<Opacity>,
    pub substitutions: Vec<String>,
    pub processes: Vec<&'a ast::SubshellCommand>,
}

impl<'a> Parts<'a> {
    fn note(&mut self, opacity: Opacity) {
        if !self.opaque.contains(&opacity) {
            self.opaque.push(opacity);
        }
    }

    /// Record a decoded word's expansions; returns its text.
    fn absorb(&mut self, word: &Word) {
        if word.dynamic {
            self.note(Opacity::DynamicWord);
        }
        if word.eval {
            self.note(Opacity::Eval);
        }
        if !word.substitutions.is_empty() {
            self.note(Opacity::CommandSubstitution);
            self.substitutions.extend(word.substitutions.iter().cloned());
        }
    }

    pub(crate) fn push_word(&mut self, word: Word) {
        self.absorb(&word);
        self.words.push(word);
    }

    pub(crate) fn push_words(&mut self, words: Vec<Word>) {
        for word in words {
            self.push_word(word);
        }
    }

    pub(crate) fn item(&mut self, item: &'a ast::CommandPrefixOrSuffixItem) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r),
            ast::CommandPrefixOrSuffixItem::Word(w) => self.push_words(expand(&w.value)),
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                if self.words.is_empty() {
                    self.assignment(a);
                } else {
                    // `export A=b`, `declare x=1`: an argument of a declaration builtin, brace
                    // expanded like any (`export a={x,y}` exports `a=y`).
                    self.push_words(expand(&w.value));
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                self.note(Opacity::ProcessSubstitution);
                self.processes.push(sub);
                self.words.push(Word::literal(&process_text(kind, sub)));
            }
        }
    }

    fn assignment(&mut self, a: &ast::Assignment) {
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, index) => {
                let index = decode(index);
                self.substitutions.extend(index.substitutions.iter().cloned());
                self.evaluated(subscript::subscript(&index.text));
                format!("{n}[{}]", index.text)
            }
        };
        let value = match &a.value {
            ast::AssignmentValue::Scalar(w) => self.assigned(&w.value),
            ast::AssignmentValue::Array(items) => {
                let texts: Vec<String> = items
                    .iter()
                    .map(|(key, value)| {
                        let v = self.assigned(&value.value);
                        match key {
                            Some(k) => {
                                // `a=(['$(rm x)']=1)`: the key is evaluated again, quotes removed.
                                let key = self.assigned(&k.value);
                                self.evaluated(subscript::subscript(&key));
                                format!("[{key}]={v}")
                            }
                            None => v,
                        }
                    })
                    .collect();
                format!("({})", texts.join(" "))
            }
        };
        self.assignments.push((name, value));
    }

    /// A subscript the shell evaluates: code (and its substitutions) when not a plain integer.
    fn evaluated(&mut self, evaluation: subscript::Evaluation) {
        if evaluation.code {
            self.note(Opacity::Eval);
        }
        for s in evaluation.substitutions {
            if !self.substitutions.contains(&s) {
                self.substitutions.push(s);
            }
        }
    }

    /// An assigned value: substitutions run, plain expansions only affect the variable.
    fn assigned(&mut self, raw: &str) -> String {
        let word = decode(raw);
        if !word.substitutions.is_empty() {
            self.note(Opacity::CommandSubstitution);
            self.substitutions.extend(word.substitutions.iter().cloned());
        }
        word.text
    }

    pub(crate) fn redirect(&mut self, r: &'a ast::IoRedirect) {
        let (fd, kind, target) = match r {
            ast::IoRedirect::File(fd, kind, target) => {
                let kind = match kind {
                    ast::IoFileRedirectKind::Read => RedirectKind::Input,
                    ast::IoFileRedirectKind::Write => RedirectKind::Output,
                    ast::IoFileRedirectKind::Append => RedirectKind::Append,
                    ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                    ast::IoFileRedirectKind::Clobber => RedirectKind::Clobber,
                    ast::IoFileRedirectKind::DuplicateInput => RedirectKind::DupInput,
                    ast::IoFileRedirectKind::DuplicateOutput => RedirectKind::DupOutput,
                };
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(w) | ast::IoFileRedirectTarget::Duplicate(w) => {
                        self.target(decode(&w.value))
                    }
                    ast::IoFileRedirectTarget::Fd(n) => n.to_string(),
                    ast::IoFileRedirectTarget::ProcessSubstitution(pkind, sub) => {
                        self.note(Opacity::ProcessSubstitution);
                        self.processes.push(sub);
                        process_text(pkind, sub)
                    }
                };
                (*fd, kind, target)
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                let body = if doc.requires_expansion {
                    self.target(decode_heredoc(&doc.doc.value))
                } else {
                    doc.doc.value.clone()
                };
                (*fd, RedirectKind::HereDoc, body)
            }
            ast::IoRedirect::HereString(fd, w) => {
                (*fd, RedirectKind::HereString, self.target(decode(&w.value)))
            }
            ast::IoRedirect::OutputAndError(w, append) => {
                let kind =
                    if *append { RedirectKind::AppendOutputAndError } else { RedirectKind::OutputAndError };
                (None, kind, self.target(decode(&w.value)))
            }
        };
        self.redirects.push(Redirect { fd, kind, target });
    }

    fn target(&mut self, word: Word) -> String {
        self.absorb(&word);
        if word.glob {
            // `> *.txt`: bash expands the target too.
            self.note(Opacity::DynamicWord);
        }
        word.text
    }
}

fn process_text(kind: &ast::ProcessSubstitutionKind, sub: &ast::SubshellCommand) -> String {
    let sign = match kind {
        ast::ProcessSubstitutionKind::Read => '<',
        ast::ProcessSubstitutionKind::Write => '>',
    };
    format!("{sign}({})", sub.list)
}
