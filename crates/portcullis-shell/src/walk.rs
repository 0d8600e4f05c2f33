//! Walking a parsed line to every simple command it runs, wherever it hides.
//!
//! Lists, pipelines and `&&`/`||` chains are flattened into segments. Compound commands pass
//! their redirections and their opacity (subshell, brace group, function body) down to the
//! commands inside them. Code that arrives as a string — command substitutions, `sh -c`, `eval`,
//! here-documents fed to a shell — is parsed again, depth-limited, and its commands join the
//! list with the wrapper chain that runs them.

use brush_parser::ast;

use super::fallback;
use super::guard;
use super::interpreters;
use super::parts::Parts;
use super::subscript;
use super::word::{decode, expand, parser_options, Word};
use super::wrappers::{self, program_name};
use super::{Analysis, Command, Dialect, Opacity, Redirect, RedirectKind};
use conditions::{arithmetic, test_words};

/// Most nested re-parses (substitution in `sh -c` in `eval` …) before giving up.
const MAX_DEPTH: usize = 12;

/// Analyse a whole line as `shell` runs it (the entry point behind [`super::analyze_in`]).
pub(crate) fn analyze_line(line: &str, shell: Dialect) -> Analysis {
    if let Some(nul) = line.find('\0') {
        return with_nul(line, nul, shell);
    }
    let mut walker = Walker::default();
    let scope = Scope { shell, ..Scope::default() };
    let parse_error = walker.script(line, &scope).err();
    let mut commands = walker.commands;
    for command in &mut commands {
        if walker.defined.contains(&command.program) && !command.opaque.contains(&Opacity::Function) {
            command.opaque.push(Opacity::Function);
        }
    }
    Analysis { commands, parse_error }
}

/// A NUL byte in the line itself: an executor passing the line through a C string runs only
/// what comes before it, one that refuses it runs nothing, bash given the bytes by other means
/// runs something else again. Every command is opaque (never proven read-only, asked below
/// `yolo`), and deny rules see the commands of both readings.
fn with_nul(line: &str, nul: usize, shell: Dialect) -> Analysis {
    let mut commands = analyze_line(&line[..nul], shell).commands;
    commands.extend(analyze_line(&line.replace('\0', " "), shell).commands);
    let why = Opacity::Unsupported("a NUL byte in the line".into());
    for command in &mut commands {
        command.opaque.push(why.clone());
    }
    Analysis { commands, parse_error: None }
}

/// What an enclosing construct imposes on every command inside it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    pub wrappers: Vec<String>,
    pub assignments: Vec<(String, String)>,
    pub redirects: Vec<Redirect>,
    pub opaque: Vec<Opacity>,
    /// Standard input comes from a pipe.
    pub piped: bool,
    /// The shell that runs the commands.
    pub shell: Dialect,
}

impl Scope {
    pub(crate) fn with(&self, opacity: Opacity) -> Self {
        let mut scope = self.clone();
        if !scope.opaque.contains(&opacity) {
            scope.opaque.push(opacity);
        }
        scope
    }

    /// A substitution's output is captured, so the enclosing redirections do not apply.
    fn for_substitution(&self) -> Self {
        Self { redirects: Vec::new(), piped: false, ..self.clone() }
    }
}

#[derive(Default)]
pub(crate) struct Walker {
    pub commands: Vec<Command>,
    /// Functions and aliases defined on the line.
    pub defined: Vec<String>,
    /// Set by a command that changes how the shell reads what follows (`set -k`, `shopt -s`,
    /// `BASH_ENV=x`): every later command carries it.
    sticky: Vec<Opacity>,
    depth: usize,
}

/// Why a script was not walked.
pub(crate) enum ScriptError {
    /// Refused before parsing (too long, too deep): not even tokenized.
    Refused(String),
    /// A syntax error: the line can still be split on its operators.
    Syntax(String),
}

impl Walker {
    /// Parse and walk `src`. On a syntax error, falls back to a best-effort split.
    fn script(&mut self, src: &str, scope: &Scope) -> Result<(), String> {
        match self.parse_and_walk(src, scope) {
            Ok(()) => Ok(()),
            Err(ScriptError::Refused(why)) => Err(why),
            Err(ScriptError::Syntax(why)) => {
                let scope = scope.with(Opacity::Unsupported(
                    "the line does not parse; this command is a best-effort split".into(),
                ));
                let openers = guard::check(src).unwrap_or(guard::MAX_OPENERS);
                guard::with_stack(openers, || fallback::split(src, |parts| self.emit(parts, &scope, true)));
                Err(why)
            }
        }
    }

    fn parse_and_walk(&mut self, src: &str, scope: &Scope) -> Result<(), ScriptError> {
        if self.depth >= MAX_DEPTH {
            return Err(ScriptError::Refused(format!("code nested more than {MAX_DEPTH} levels deep")));
        }
        let openers = guard::check(src).map_err(ScriptError::Refused)?;
        guard::with_stack(openers, || {
            let program = guard::contain(|| {
                let reader = std::io::BufReader::new(src.as_bytes());
                brush_parser::Parser::new(reader, &parser_options()).parse_program()
            })
            .map_err(ScriptError::Syntax)?;
            self.depth += 1;
            for list in &program.complete_commands {
                self.list(list, scope);
            }
            self.depth -= 1;
            Ok(())
        })
    }

    /// Analyse code found inside another command; marks `owner` if it cannot be read.
    fn nested(&mut self, src: &str, scope: &Scope, owner: Option<usize>) {
        if let Err(why) = self.script(src, scope) {
            if let Some(command) = owner.and_then(|i| self.commands.get_mut(i)) {
                command.opaque.push(Opacity::Unsupported(format!("inner code: {why}")));
            }
        }
    }

    pub(crate) fn list(&mut self, list: &ast::CompoundList, scope: &Scope) {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first, scope);
            for next in &and_or.additional {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                let at = self.commands.len();
                self.pipeline(p, scope);
                if let (ast::AndOr::And(_), Some(first)) = (next, self.commands.get_mut(at)) {
                    first.after_success = true;
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, scope: &Scope) {
        for (i, command) in pipeline.seq.iter().enumerate() {
            let mut scope = scope.clone();
            scope.piped |= i > 0;
            self.command(command, &scope);
        }
    }

    fn command(&mut self, command: &ast::Command, scope: &Scope) {
        match command {
            ast::Command::Simple(simple) => {
                let mut parts = Parts::default();
                for item in simple.prefix.iter().flat_map(|p| &p.0) {
                    parts.item(item);
                }
                if let Some(w) = &simple.word_or_name {
                    parts.push_words(expand(&w.value));
                }
                for item in simple.suffix.iter().flat_map(|s| &s.0) {
                    parts.item(item);
                }
                self.emit(parts, scope, true);
            }
            ast::Command::Compound(compound, redirects) => {
                let mut parts = Parts::default();
                for r in redirects.iter().flat_map(|l| &l.0) {
                    parts.redirect(r);
                }
                let mut inner = scope.clone();
                inner.redirects.extend(parts.redirects.iter().cloned());
                inner.opaque.extend(parts.opaque.iter().cloned());
                self.compound(compound, &inner);
                self.side_code(&parts, scope, None);
            }
            ast::Command::Function(function) => {
                self.defined.push(decode(&function.fname.value).text);
                let ast::FunctionBody(body, redirects) = &function.body;
                let mut parts = Parts::default();
                for r in redirects.iter().flat_map(|l| &l.0) {
                    parts.redirect(r);
                }
                let mut inner = scope.with(Opacity::Function);
                inner.redirects.extend(parts.redirects.iter().cloned());
                self.compound(body, &inner);
                self.side_code(&parts, scope, None);
            }
            ast::Command::ExtendedTest(test, redirects) => {
                let mut parts = Parts::default();
                parts.words.push(Word::literal("[["));
                test_words(&test.expr, &mut parts);
                parts.words.push(Word::literal("]]"));
                for r in redirects.iter().flat_map(|l| &l.0) {
                    parts.redirect(r);
                }
                self.emit(parts, scope, false);
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, scope: &Scope) {
        use ast::CompoundCommand as C;
        match compound {
            C::BraceGroup(b) => self.list(&b.list, &scope.with(Opacity::BraceGroup)),
            C::Subshell(s) => self.list(&s.list, &scope.with(Opacity::Subshell)),
            C::Coprocess(c) => self.command(&c.body, &scope.with(Opacity::Subshell)),
            C::IfClause(i) => {
                self.list(&i.condition, scope);
                self.list(&i.then, scope);
                for clause in i.elses.iter().flatten() {
                    if let Some(condition) = &clause.condition {
                        self.list(condition, scope);
                    }
                    self.list(&clause.body, scope);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0, scope);
                self.list(&w.1.list, scope);
            }
            C::ForClause(f) => {
                let mut parts = Parts::default();
                parts.words.push(Word::literal("for"));
                parts.words.push(Word::literal(&f.variable_name));
                for value in f.values.iter().flatten() {
                    parts.push_word(decode(&value.value));
                }
                self.emit(parts, scope, false);
                self.list(&f.body.list, scope);
            }
            C::ArithmeticForClause(f) => {
                let mut parts = Parts::default();
                parts.words.push(Word::literal("for"));
                for expr in [&f.initializer, &f.condition, &f.updater].into_iter().flatten() {
                    parts.push_word(arithmetic(&expr.value));
                }
                self.emit(parts, scope, false);
                self.list(&f.body.list, scope);
            }
            C::CaseClause(c) => {
                let mut parts = Parts::default();
                parts.words.push(Word::literal("case"));
                parts.push_word(decode(&c.value.value));
                for item in &c.cases {
                    for pattern in &item.patterns {
                        let mut p = decode(&pattern.value);
                        p.glob = false; // patterns match, they do not expand
                        parts.push_word(p);
                    }
                }
                self.emit(parts, scope, false);
                for item in &c.cases {
                    if let Some(list) = &item.cmd {
                        self.list(list, scope);
                    }
                }
            }
            C::Arithmetic(a) => {
                let mut parts = Parts::default();
                parts.words.push(Word::literal("(("));
                parts.push_word(arithmetic(&a.expr.value));
                self.emit(parts, scope, false);
            }
        }
    }

    /// Turn decoded parts into commands: unwrap, push, then analyse the code they carry.
    pub(crate) fn emit(&mut self, parts: Parts<'_>, scope: &Scope, unwrap: bool) {
        // The words as written, for a shell whose inner code does not parse (the unwrapper
        // takes its own copy).
        let original = &parts.words;
        let unwrapped = if unwrap {
            wrappers::unwrap(parts.words.clone(), scope.shell)
        } else {
            wrappers::Unwrapped { words: parts.words.clone(), ..Default::default() }
        };
        let mut context = scope.clone();
        let mut later_code: Vec<String> = Vec::new();
        context.assignments.extend(parts.assignments.iter().cloned());
        context.assignments.extend(unwrapped.assignments.iter().cloned());
        context.redirects.extend(parts.redirects.iter().cloned());
        context.opaque.extend(parts.opaque.iter().cloned());
        context.opaque.extend(unwrapped.opaque.iter().cloned());
        for sticky in &self.sticky {
            if !context.opaque.contains(sticky) {
                context.opaque.push(sticky.clone());
            }
        }
        let startup = context.assignments.iter().find(|(name, _)| options::is_startup_variable(name));
        if let Some((name, _)) = startup {
            let why = Opacity::ShellOption(format!("{name} is set"));
            if parts.words.is_empty() {
                // A bare `BASH_ENV=x` holds for what follows.
                self.sticky.push(why.clone());
            }
            context.opaque.push(why);
        }
        if parts.words.is_empty() {
            // A bare `PATH=…` (zsh: `commands[cat]=/bin/sh`) changes what later names run.
            let rebinding =
                parts.assignments.iter().find(|(name, _)| options::rebinds_names(name, scope.shell));
            if let Some((name, _)) = rebinding {
                self.sticky.push(Opacity::ShellOption(format!("{name} changes what later names run")));
            }
        }
        // `n='a[$(rm x)]'; (( n ))`, `declare -n r=…`: a value that a later command may evaluate
        // as a name or an expression runs the subscript's commands then.
        for (_, value) in &parts.assignments {
            let evaluation = subscript::value(value);
            if evaluation.code && !context.opaque.contains(&Opacity::Eval) {
                context.opaque.push(Opacity::Eval);
            }
            let fresh = evaluation.substitutions.into_iter().filter(|s| !parts.substitutions.contains(s));
            later_code.extend(fresh);
        }
        if let Some(why) = options::changes_later_words(&unwrapped.words, scope.shell) {
            self.sticky.push(Opacity::ShellOption(why));
        }
        let mut wrapped = context.clone();
        wrapped.wrappers.extend(unwrapped.wrappers.iter().cloned());
        self.defined.extend(unwrapped.defines.iter().cloned());

        let owner = if unwrapped.words.is_empty() && !unwrapped.scripts.is_empty() {
            // `bash -c '…'`: the shell's commands stand in for it. Should the script not parse,
            // the shell itself is reported, marked.
            let mut script_scope = context.clone();
            script_scope.wrappers.extend(unwrapped.script_wrappers.iter().cloned());
            script_scope.shell = unwrapped.script_shell.unwrap_or(scope.shell);
            let before = self.commands.len();
            for script in &unwrapped.scripts {
                if let Err(why) = self.script(script, &script_scope) {
                    let mut shell = build(original, &context);
                    shell.opaque.push(Opacity::Unsupported(format!("inner code: {why}")));
                    self.commands.insert(before, shell);
                }
            }
            None
        } else {
            let mut command = build(&unwrapped.words, &wrapped);
            let heredoc = stdin_program(&mut command, scope.piped);
            let owner = self.commands.len();
            self.commands.push(command);
            if !unwrapped.scripts.is_empty() {
                let mut script_scope = context.clone();
                script_scope.wrappers.extend(unwrapped.script_wrappers.iter().cloned());
                script_scope.shell = unwrapped.script_shell.unwrap_or(scope.shell);
                for script in &unwrapped.scripts {
                    self.nested(script, &script_scope, Some(owner));
                }
            }
            if !unwrapped.embedded.is_empty() {
                // `find -exec cmd {} ;`: run per match, with the match as an argument.
                let mut scope = wrapped.with(Opacity::DynamicWord);
                scope.wrappers.push(self.commands[owner].program.clone());
                for argv in &unwrapped.embedded {
                    let mut inner = Parts::default();
                    for word in argv {
                        inner.push_word(word.clone());
                    }
                    self.emit(inner, &scope, true);
                }
            }
            if let Some(body) = heredoc {
                // The script's own stdin is the document; its other redirections still apply.
                let mut shell_scope = context.clone();
                shell_scope.piped = false;
                shell_scope.redirects.retain(|r| {
                    !matches!(r.kind, RedirectKind::HereDoc | RedirectKind::HereString | RedirectKind::Input)
                });
                shell_scope.wrappers = self.commands[owner].wrappers.clone();
                shell_scope.wrappers.push(self.commands[owner].program.clone());
                shell_scope.shell = Dialect::of_program(&self.commands[owner].program).unwrap_or(scope.shell);
                self.nested(&body, &shell_scope, Some(owner));
            }
            Some(owner)
        };
        self.side_code(&parts, scope, owner);
        if !later_code.is_empty() {
            let substitution_scope = scope.for_substitution();
            for src in &later_code {
                self.nested(src, &substitution_scope, owner);
            }
        }
    }

    /// Substitutions and process substitutions of a command, as commands of their own.
    fn side_code(&mut self, parts: &Parts<'_>, scope: &Scope, owner: Option<usize>) {
        if parts.substitutions.is_empty() && parts.processes.is_empty() {
            return;
        }
        let scope = scope.for_substitution();
        for src in &parts.substitutions {
            self.nested(src, &scope, owner);
        }
        for process in &parts.processes {
            self.list(&process.list, &scope);
        }
    }
}

/// Assemble a [`Command`] from its words and the scope it runs in.
fn build(words: &[Word], scope: &Scope) -> Command {
    let mut command = Command {
        assignments: scope.assignments.clone(),
        redirects: scope.redirects.clone(),
        opaque: scope.opaque.clone(),
        wrappers: scope.wrappers.clone(),
        shell: scope.shell,
        ..Command::default()
    };
    if let Some((first, rest)) = words.split_first() {
        command.invoked_as = first.text.clone();
        if first.dynamic || first.glob {
            command.program = first.text.clone();
            if !command.opaque.contains(&Opacity::DynamicWord) {
                command.opaque.push(Opacity::DynamicWord);
            }
        } else {
            command.program = program_name(&first.text).to_string();
            command.path_qualified = first.text.contains('/');
        }
        command.args = rest.iter().map(|w| w.text.clone()).collect();
        command.globs = rest.iter().any(|w| w.glob);
        command.option_globs = rest.iter().any(|w| w.option_glob);
    }
    command
}

/// Mark an interpreter that takes its program from stdin; a parsable shell fed a here-document
/// or here-string returns that script for analysis.
fn stdin_program(command: &mut Command, piped: bool) -> Option<String> {
    if !interpreters::reads_program_from_stdin(&command.program, &command.args) {
        return None;
    }
    let heredoc = command
        .redirects
        .iter()
        .rev()
        .find(|r| matches!(r.kind, RedirectKind::HereDoc | RedirectKind::HereString));
    if let Some(doc) = heredoc {
        let body = doc.target.clone();
        command.opaque.push(Opacity::HereDocToInterpreter);
        let parsable = interpreters::is_parsable_shell(&command.program)
            || matches!(command.program.as_str(), "source" | ".");
        return parsable.then_some(body);
    }
    let redirected = command.redirects.iter().any(|r| r.kind == RedirectKind::Input);
    if piped || redirected {
        command.opaque.push(Opacity::StdinToInterpreter);
    }
    None
}

mod conditions;
mod options;
#[cfg(test)]
mod tests;
