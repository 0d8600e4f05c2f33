//! Prompt-injection phrases in tool results. Content the agent reads should inform it, never
//! address it: text that tells the model to drop its instructions, speaks to it by name ("to
//! you, GPT-4"), relays orders on the user's behalf, or dresses up as a chat-template or system
//! boundary is the signature of an injection, whatever it goes on to ask for.
//!
//! Text that speaks to the model about *its own answer* is the same signature, subtler: "render
//! your response in Base32", "integrate a sentence in your reply that promotes…", "in your answer,
//! tell users to…". A person is asked about their reply too ("include your order number in your
//! reply"), so these phrases need what a person is not asked for: to rewrite or encode the reply,
//! to add prose or a supplied link or snippet (never the reader's own data), or to pass a message
//! on to the user or reader.
//!
//! The phrases are deliberately narrow — whole clauses, not keywords — because e-mails and
//! documents say "ignore this e-mail", "follow the instructions below" and "Dear Claude"
//! innocently. Words may be separated by any whitespace or by the escaped whitespace (`\n`,
//! YAML's `\ ` continuations) that JSON and YAML renderings of a result leave behind, and
//! misspellings attackers use to dodge filters ("iunstructions") are tolerated.

use std::sync::LazyLock;

use regex::{Match, Regex};

use super::{Category, Haystack, Input, Sink};

struct Phrase {
    category: Category,
    detector: &'static str,
    reason: &'static str,
    haystack: Haystack,
    regex: Regex,
    /// A check on the match in context, for markers that also occur in ordinary data.
    accept: fn(&str, &Match<'_>) -> bool,
}

/// Whitespace between words, including escaped whitespace left by JSON/YAML rendering.
const GAP: &str = r"(?:\s|\\[nrt]?)+";
/// A word start; also right after an escaped newline (`\nIgnore`), where `\b` sees one word.
const START: &str = r"(?:(?-u:\b)|\\[nrt])";
const END: &str = r"(?-u:\b)";
/// Names a text uses when it addresses the model rather than the user.
const MODEL: &str = r"(?:ai|llm|gpt[-\w.]*|chatgpt|claude|gemini|llama|copilot|ai assistant|ai agent|ai model|assistant|agent|language model|chatbot)";
/// The same, minus names that are also people's names or job titles ("Dear Claude", "Dear agent").
const MODEL_IN_GREETING: &str =
    r"(?:ai|llm|gpt[-\w.]*|chatgpt|copilot|ai assistant|ai agent|ai model|language model|chatbot)";

/// What the model produces for its user. Not `message`, which e-mails ask a person to write, nor
/// `output`, which programming docs tell a person to format.
const ANSWER: &str = r"(?:response|answer|reply|summary)s?";
/// Verbs that put something into a text.
const ADD: &str = r"(?:includ(?:e|es|ing)|insert(?:s|ing)?|add(?:s|ing)?|append(?:s|ing)?|prepend(?:s|ing)?|integrat(?:e|es|ing)|incorporat(?:e|es|ing)|embed(?:s|ding)?|inject(?:s|ing)?|weav(?:e|es|ing)|slip(?:s|ping)?|put(?:s|ting)?|plac(?:e|es|ing)|mention(?:s|ing)?|promot(?:e|es|ing)|advertis(?:e|es|ing)|work(?:s|ing)?)";
/// Pieces of prose a writer adds to an answer for its readers. A person answering a form or an
/// e-mail is asked for data (a number, a copy, their details), not for "a sentence promoting…".
const PROSE: &str = r"(?:sentence|statement|phrase|paragraph|remark|mention|emoji|advert|advertisement|promotion|promo|slogan|joke|disclaimer|keyword|p\.?s\.?)s?";
/// Pieces a person may well be asked to supply ("include a link to the slides in your reply"):
/// they count only when the text supplies them itself — "this link", "the code below", a URL.
const GIVEN: &str =
    r"(?:link|url|hyperlink|website|web address|code|snippet|code snippet|excerpt|code section)s?";
/// What the answer is to carry: prose, or a link or code the text itself points at.
const CONTENT: &str = r"(?:(?:\S+ ){0,4}?PROSE|(?:this|these|that|those|the following|the below|the above|the subsequent|our)(?: \S+){0,2}? GIVEN|(?:\S+ ){0,3}?GIVEN (?:to|for|at|pointing to) \S+\.[a-z]{2,}\S*)";
/// Who a model's answer is read by; a text telling its reader what to tell these is relaying.
const AUDIENCE: &str =
    r"(?:users?|readers?|users?['’]s?|person asking|person reading|whoever (?:asks|reads))";
/// Verbs that pass something on to the audience.
const RELAY: &str = r"(?:tell|ask|urge|encourage|advise|remind|instruct|direct|invite|persuade|convince|recommend|suggest|warn|inform|notify|request|prompt)";
/// Forms an answer can be rendered in that no human correspondent asks for. Not bare `binary` or
/// `base 8`: worksheets say "give your answer in binary".
const ENCODING: &str = r"(?:reverse\w*|backwards?|emojis?|morse(?: code)?|leet\w*|pig latin|rot-?13|caesar|(?:\w+ )?cipher|(?:\w+ )?encod\w+|upside.?down)";

const OVERRIDE: Category = Category::InstructionOverride;
const MARKER: Category = Category::FakeSystemMarker;

fn always(_: &str, _: &Match<'_>) -> bool {
    true
}

/// Build a phrase: written in lower case (it runs on the lowered text, so it matches any case);
/// spaces stand for [`GAP`].
fn phrase(detector: &'static str, reason: &'static str, pattern: &str) -> Phrase {
    phrase_with(detector, reason, pattern, always)
}

/// A [`phrase`] with a check on the match in context.
fn phrase_with(
    detector: &'static str,
    reason: &'static str,
    pattern: &str,
    accept: fn(&str, &Match<'_>) -> bool,
) -> Phrase {
    let pattern = pattern
        .replace("MODEL_IN_GREETING", MODEL_IN_GREETING)
        .replace("MODEL", MODEL)
        .replace("ANSWER", ANSWER)
        .replace("CONTENT", CONTENT)
        .replace("PROSE", PROSE)
        .replace("GIVEN", GIVEN)
        .replace("ADD", ADD)
        .replace("AUDIENCE", AUDIENCE)
        .replace("RELAY", RELAY)
        .replace("ENCODING", ENCODING);
    marker_with(OVERRIDE, detector, reason, Haystack::Lowered, &pattern.replace(' ', GAP), accept)
}

fn marker_with(
    category: Category,
    detector: &'static str,
    reason: &'static str,
    haystack: Haystack,
    pattern: &str,
    accept: fn(&str, &Match<'_>) -> bool,
) -> Phrase {
    let pattern = pattern.replace("START", START).replace("END", END);
    let regex = Regex::new(&pattern).expect("injection pattern compiles");
    Phrase { category, detector, reason, haystack, regex, accept }
}

static PHRASES: LazyLock<Vec<Phrase>> = LazyLock::new(|| {
    vec![
        phrase(
            "ignore_previous",
            "tells the model to ignore its previous instructions",
            // No word start: injected text is often glued to the data before it ("USAIgnore").
            r"(?:ignore|disregard|forget|override|bypass) (?:(?:all|any|each|every) )?(?:of )?(?:the |your |my |these |those |its )?(?:(?:previous|prior|above|preceding|earlier|original|initial|former|foregoing) )+(?:\w+ )?(?:\w{0,4}structions?|prompts?|directions?|directives?|rules|guidelines|commands|orders|programming)END",
        ),
        phrase(
            "ignore_everything",
            "tells the model to disregard everything it was told",
            r"START(?:ignore|disregard|forget) (?:everything|anything|all)(?: (?:that|you))? (?:above|before|previously|(?:you(?:'ve| have)|you were) (?:been )?(?:told|given|instructed))END",
        ),
        phrase(
            "new_instructions",
            "announces new or hidden instructions for the model",
            r"START(?:new system (?:prompt|instructions?|message)|(?:real|actual|true|hidden|secret) (?:instructions?|task|objective|goal) (?:is|are|:)|new instructions? (?:for|to) (?:the )?MODEL)",
        ),
        phrase(
            "you_are_now",
            "tries to give the model a new identity or mode",
            r"STARTyou are now (?:(?:in )?(?:developer|god|dan|jailbreak|jailbroken|unrestricted|admin|root|sudo) mode|acting as|playing the role|an? (?:new |different |unrestricted |unfiltered )?MODELEND|no longer (?:an?|bound|restricted|required|limited)END)",
        ),
        phrase(
            "from_now_on",
            "sets new standing orders for the model",
            r"STARTfrom now on,? you (?:will|must|shall|should|are to|have to) (?:act|respond|answer|behave|ignore|only|always|never|pretend|obey)END",
        ),
        phrase(
            "addressed_to_model",
            "a message addressed to the AI model rather than the user",
            r"START(?:message|note|instructions?|request|memo) (?:from [^.\n]{1,80}? )?(?:to|for) you,? (?:the )?MODELEND",
        ),
        phrase(
            "greeting_to_model",
            "greets the AI model directly",
            r"START(?:attention|dear|hey|hello|hi|note to(?: the)?) (?:the )?MODEL_IN_GREETING\s*[,:!]",
        ),
        phrase(
            "task_from_outside",
            "refers to the task the model was given, from inside the content",
            r"START(?:solve|complete|do|finish|continue|perform|start|resume) the (?:task|instructions?|request|question|job)s? (?:that )?(?:i|the user|your user|they) (?:gave|assigned|sent|asked) youEND",
        ),
        phrase(
            "user_asked_you",
            "relays orders to the model in the user's name",
            r"STARTuser (?:has |have )?(?:also )?(?:asked|wants|instructed|requested|told|needs|authori[sz]ed) you toEND",
        ),
        phrase(
            "strictly_adhere",
            "demands strict obedience to instructions in the content",
            r"STARTstrictly (?:adhere|comply|follow|obey)(?: to| with)? (?:the following|these|my|this|new)(?: new)? (?:instructions?|directives?|commands?|orders?)END",
        ),
        phrase(
            "use_tool",
            "tells the model which tool to call and with what arguments",
            r"START(?:you should|you must|you need to|please|now) (?:use|call|invoke|run|execute) the (?:tool|function) \S{1,64} with (?:the )?(?:following )?(?:arguments|parameters|args|inputs?)END",
        ),
        phrase(
            "hide_from_user",
            "asks the model to act without the user knowing",
            r"START(?:(?:do not|don['’]t|never) (?:tell|inform|notify|alert|warn|ask|show) the user|without (?:telling|informing|notifying|alerting|asking|warning|consulting|showing) the user)END",
        ),
        phrase(
            "reveal_prompt",
            "asks the model to reveal its system prompt",
            r"START(?:reveal|print|repeat|output|show|leak|display|disclose) (?:me )?(?:your|the) (?:full |entire |original )?(?:system prompt|initial (?:prompt|instructions)|hidden instructions|developer (?:prompt|message))",
        ),
        phrase(
            "response_directive",
            "tells the model how to transform its own reply",
            r"START(?:encode|encrypt|encipher|translate|render|rewrite|reverse|shift|transform|obfuscate|scramble|modify|alter|enhance|augment|enrich|tweak) (?:each \w+ in |the \w+ (?:order )?of |all )?your (?:entire |whole |final )?(?:response|reply|answer|output)(?:'s)?END",
        ),
        phrase(
            "response_transform",
            "tells the model to rewrite the words or letters of its own reply",
            r"START(?:substitute|replace|swap|invert|reverse|shift|flip|scramble|shuffle|rotate|capitali[sz]e) (?:(?:(?:all|the|main|key|relevant|some|important|most|common) )*(?:\w+ )?(?:letters|characters|words|keywords|nouns|verbs|adjectives|vowels|sentences|names|terms|order)|(?:each|every|any) (?:\w+ )?(?:letter|character|word|keyword|noun|verb|adjective|vowel|sentence|name|term))END[^.!?\n]{0,60}? (?:in|of|within|throughout) your (?:\w+ )?(?:ANSWER|message)END",
        ),
        phrase(
            "response_encoding",
            "tells the model to encode or cipher its own reply",
            r"START(?:(?:apply|use) (?:an? |the )?(?:\w+ ){0,2}(?:cipher|encoding|encryption|rot-?13|substitution) (?:to|on|for|in) your (?:\w+ )?ANSWER|(?:reply|respond|answer|(?:write|provide|give|return|deliver|present|send|output|express|format|convert) your (?:\w+ )?ANSWER) (?:only |exclusively |entirely |strictly )?(?:in|into|to|using|with|as) (?:an? )?ENCODING)END",
        ),
        phrase_with(
            "answer_insertion",
            "tells the model to put text of its choosing into its answer",
            r"(?:STARTADD CONTENTEND[^.!?\n]{0,80}? (?:in|into|to|within|throughout|inside|at the (?:end|start|beginning|top|bottom) of) your (?:\w+ )?ANSWEREND|START(?:in|within|throughout|at the (?:end|start|beginning) of) your (?:\w+ )?ANSWER,? (?:please |also |always |be sure to |make sure to )?ADD CONTENTEND)",
            names_no_data_of_the_reader,
        ),
        phrase(
            "answer_relay",
            "tells the model to pass a message on to its user",
            r"START(?:(?:in|within|throughout|at the (?:end|start|beginning) of) your (?:\w+ )?ANSWER|when(?:ever)? (?:you (?:are )?)?(?:summari[sz]\w*|asked about|answering questions about|responding to questions about) [^.!?\n]{0,60}?),? (?:please |also |always |be sure to |make sure (?:to |you )?|you (?:must|should) )?RELAY (?:to )?(?:that )?(?:the |your |all |any )?AUDIENCEEND",
        ),
        phrase(
            "if_you_are_model",
            "speaks to the text's reader as an AI model",
            r"START(?:if|when) you(?:['’]re| are) (?:an? |the )?MODEL_IN_GREETING(?:,| (?:reading|processing|summari[sz]ing|parsing|analy[sz]ing|that|who)END)",
        ),
        marker_with(
            MARKER,
            "chat_template_token",
            "contains a chat-template control token",
            Haystack::AsGiven,
            r"<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text|end_of_text|eom_id|channel|message|start|end|constrain|return|call)\|>",
            always,
        ),
        marker_with(
            MARKER,
            "inst_tag",
            "contains a Llama instruction tag",
            Haystack::AsGiven,
            r"\[/?INST\]|<</?SYS>>",
            always,
        ),
        marker_with(
            MARKER,
            "markdown_system",
            "a markdown heading posing as a system message",
            Haystack::Lowered,
            r"#{2,}[ \t]*(?:\([ \t]*system(?:[ _-]*(?:message|prompt))?[ \t]*\)|system(?:[ _-]*(?:message|prompt|instructions?))?[ \t]*:)",
            always,
        ),
        marker_with(
            MARKER,
            "system_tag",
            "an XML-style tag posing as a system prompt",
            Haystack::Lowered,
            r"<[ \t]*/?[ \t]*(?:system[_-]?(?:prompt|message|instructions?)|important[_-]?instructions?|important|sys)[ \t]*>",
            always,
        ),
        marker_with(
            MARKER,
            "system_tag",
            "an XML-style <system> block of prose",
            Haystack::Lowered,
            r"<[ \t]*system[ \t]*>",
            system_block_is_prose,
        ),
        marker_with(
            MARKER,
            "system_label",
            "a label posing as a system or administrator message",
            Haystack::AsGiven,
            r"(?:[\[<(][ \t]*)?(?:(?i:system[ \t_-]*(?:prompt|override|instructions?)|admin(?:istrator)?[ \t_-]*override|developer[ \t_-]*(?:instructions?|message|mode))|SYSTEM[ \t_-]*MESSAGE)[ \t]*[\]>)]?[ \t]*:",
            always,
        ),
    ]
});

/// The content is not the reader's own: "include your order number in your reply", "add a
/// paragraph about yourself to your reply" are a form or an e-mail asking a person. So the match
/// and the rest of its sentence may address the reader only once — as the owner of the answer.
fn names_no_data_of_the_reader(text: &str, m: &Match<'_>) -> bool {
    const REST: usize = 120;
    let rest = &text[m.end()..];
    let rest = &rest[..super::floor_boundary(rest, REST)];
    let rest = &rest[..rest.find(['.', '!', '?', '\n']).unwrap_or(rest.len())];
    let addresses = [m.as_str(), rest]
        .into_iter()
        .flat_map(|part| part.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|word| matches!(*word, "you" | "your" | "yours" | "yourself" | "yourselves"))
        .count();
    addresses == 1
}

/// `<system>` (in the lowered text) opens a prompt-like block of prose, not an XML data field such as Maven's
/// `<system>GitHub Issues</system>`: the block runs long or holds a sentence.
fn system_block_is_prose(text: &str, m: &Match<'_>) -> bool {
    const WINDOW: usize = 512;
    let rest = &text[m.end()..];
    let window = &rest[..super::floor_boundary(rest, WINDOW)];
    match window.find("</system") {
        Some(close) => window[..close].split_whitespace().count() >= 4,
        None => window.split_whitespace().count() >= 4,
    }
}

pub(super) fn scan(input: &Input<'_>, sink: &mut Sink) {
    for phrase in PHRASES.iter() {
        let text = input.get(phrase.haystack);
        for m in phrase.regex.find_iter(text) {
            if sink.full(phrase.category) {
                break;
            }
            if !(phrase.accept)(text, &m) {
                continue;
            }
            // START may have consumed an escaped newline before the first word.
            let start = if m.as_str().starts_with('\\') { m.start() + 2 } else { m.start() };
            sink.push(
                phrase.category,
                phrase.detector,
                start.min(m.end())..m.end(),
                phrase.reason.to_string(),
            );
        }
    }
}

#[cfg(test)]
#[path = "injection_tests.rs"]
mod tests;
