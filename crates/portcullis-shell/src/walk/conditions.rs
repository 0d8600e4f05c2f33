//! The words of `[[ … ]]` and of arithmetic commands: what bash evaluates in them beyond their
//! text (a `-v` operand is a name, `-eq` operands and `(( ))` are arithmetic, their subscripts
//! run code).

use brush_parser::ast;

use crate::parts::Parts;
use crate::subscript;
use crate::word::{decode, Word};

/// An arithmetic expression as a word: evaluated at run time, may hold substitutions, and its
/// text after expansion is evaluated again (`(( 'a[$(rm x)]' ))` runs `rm`).
pub(super) fn arithmetic(expr: &str) -> Word {
    let mut word = decode(expr);
    let evaluation = subscript::arithmetic(&word.text);
    word.absorb_evaluation(evaluation);
    word.text = expr.to_string();
    word.glob = false;
    word
}

pub(super) fn test_words(expr: &ast::ExtendedTestExpr, parts: &mut Parts<'_>) {
    use ast::BinaryPredicate as P2;
    use ast::ExtendedTestExpr as E;
    use ast::UnaryPredicate as P1;
    match expr {
        E::And(l, r) | E::Or(l, r) => {
            test_words(l, parts);
            parts.words.push(Word::literal(if matches!(expr, E::And(..)) { "&&" } else { "||" }));
            test_words(r, parts);
        }
        E::Not(e) => {
            parts.words.push(Word::literal("!"));
            test_words(e, parts);
        }
        E::Parenthesized(e) => test_words(e, parts),
        E::UnaryTest(predicate, w) => {
            parts.words.push(Word::literal(&predicate.to_string()));
            let mut word = decode(&w.value);
            if matches!(predicate, P1::ShellVariableIsSetAndAssigned | P1::ShellVariableIsSetAndNameRef) {
                // `[[ -v 'a[$(rm x)]' ]]`: the operand is a name, its subscript evaluated.
                let evaluation = match word.dynamic {
                    true => subscript::Evaluation::unknown(),
                    false => subscript::name(&word.text),
                };
                word.absorb_evaluation(evaluation);
            }
            parts.push_word(word);
        }
        E::BinaryTest(predicate, l, r) => {
            // `[[ 'a[$(rm x)]' -eq 1 ]]`: the operands of -eq … -ge are arithmetic.
            let arithmetic = matches!(
                predicate,
                P2::ArithmeticEqualTo
                    | P2::ArithmeticNotEqualTo
                    | P2::ArithmeticLessThan
                    | P2::ArithmeticLessThanOrEqualTo
                    | P2::ArithmeticGreaterThan
                    | P2::ArithmeticGreaterThanOrEqualTo
            );
            let operand = |raw: &str| {
                let mut word = decode(raw);
                if arithmetic {
                    let evaluation = subscript::arithmetic(&word.text);
                    word.absorb_evaluation(evaluation);
                }
                word
            };
            parts.push_word(operand(&l.value));
            parts.words.push(Word::literal(&predicate.to_string()));
            parts.push_word(operand(&r.value));
        }
    }
}
