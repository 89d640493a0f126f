//! The router: which intent a request is about. A route is a hint to the actor (which tools to
//! mention first), never a permission, so a wrong route costs a detour, not a write.
//!
//! Every message gets a keyword route first. A message shorter than [`SHORT_MESSAGE_CHARS`] keeps
//! it. Otherwise the decision model scores every intent over the request (clipped to
//! [`ROUTE_CLIP_CHARS`]) after a fixed instruction, which stays byte-identical between requests
//! so the worker's KV cache reuses it. The model's label counts only at [`ROUTE_FLOOR_BPS`] or
//! above, and a confident `general` never overrides a keyword route (small models say `general`
//! when unsure; a keyword is evidence of file work).

use std::time::{Duration, Instant};

use rein_models::Model;
use rein_protocol::cowork::{
    Intent, Route, RouteSource, DECISION_TIMEOUT_MS, ROUTE_CLIP_CHARS, ROUTE_FLOOR_BPS,
    SHORT_MESSAGE_CHARS,
};
use rein_protocol::{ChatMessage, ChooseRequest, LabelProbability, Prompt};

use crate::decide::{bps_of, choose_by, clip_chars, Decision};

/// Confidence recorded for a keyword route that matched a keyword. Nominal, not measured: it
/// only orders a keyword match above the fallback below.
pub const KEYWORD_MATCH_BPS: u32 = 5_000;
/// Confidence recorded when no keyword matched and the route is `general` by default.
pub const KEYWORD_FALLBACK_BPS: u32 = 2_500;

/// The decision model's instruction, sent first and unchanged so its tokens are cached. Each
/// intent is offered under the word in [`ROUTE_LABELS`], described by what the request needs.
pub const ROUTE_INSTRUCTION: &str = "You route messages sent to an assistant that works on the \
files in a person's folder. Pick the one label for what the person needs first:\n\
chat: talk or a question the assistant answers without opening any file\n\
find: find, list or locate files and folders, or what changed in them\n\
summary: make one document, log or pasted text shorter\n\
linked: find other files that mention or belong with a given file, name or topic\n\
compute: calculate totals, counts, averages or tables from data files\n\
image: look at an image, photo, screenshot or scanned page\n\
audio: listen to an audio file: transcribe a recording or voice note\n\
Answer with the label only.";

/// The word the decision model answers with for each intent: plain words for what the request
/// needs, none a prefix of another. With the intents' own names the 0.5B answered `report` or
/// `vision` for many summaries; with these words (same instruction and examples) the router
/// suite's dev split went from 34/39 to 36/39. Probabilities are reported under the intents'
/// names.
pub const ROUTE_LABELS: [(Intent, &str); 7] = [
    (Intent::General, "chat"),
    (Intent::Explore, "find"),
    (Intent::Summarize, "summary"),
    (Intent::Related, "linked"),
    (Intent::Report, "compute"),
    (Intent::Vision, "image"),
    (Intent::Voice, "audio"),
];

/// Worked examples sent after the instruction as earlier turns of the conversation (so they
/// are part of the cached prefix and cost nothing per request). None is taken from the router
/// suite.
pub const ROUTE_EXAMPLES: [(&str, Intent); 10] = [
    (
        "sum the amounts in invoices.csv per customer and show me the top 5",
        Intent::Report,
    ),
    (
        "what's written on the sign in photos/IMG_2231.jpeg?",
        Intent::Vision,
    ),
    (
        "tl;dr of minutes/board_2023-11.docx pls, whats the main point",
        Intent::Summarize,
    ),
    (
        "hi, can you also edit my files or do you only look at them? just wondering how this works",
        Intent::General,
    ),
    (
        "can you tell me what time zone Tokyo is in? just curious",
        Intent::General,
    ),
    (
        "please type out what's said in team_sync.mp3",
        Intent::Voice,
    ),
    (
        "are there other docs that go with budget_2024.xlsx? the notes and emails, theres maybe 2 or 3",
        Intent::Related,
    ),
    (
        "where's the folder with last year's tax stuff, cant find it",
        Intent::Explore,
    ),
    (
        "make this shorter for me:\n\nDear team, the office will be closed on Friday for maintenance. Please take your laptops home on Thursday and work remotely. The heating system is being replaced and the building will be without power.",
        Intent::Summarize,
    ),
    (
        "find every note that talks about project Falcon besides the plan itself",
        Intent::Related,
    ),
];

/// What comes before the person's message in the last turn (and in every example).
const REQUEST_LEAD: &str = "Request: ";

/// The word the decision model answers with for `intent`.
pub fn label_word(intent: Intent) -> &'static str {
    ROUTE_LABELS
        .iter()
        .find(|(i, _)| *i == intent)
        .map_or(intent.as_str(), |(_, word)| word)
}

/// One row of the keyword table: any of `needles` (lower case, matched as substrings of the
/// lower-cased message) routes to `intent`. Rows are tried in order; the first match wins, so
/// the input kind (audio, image) comes before what is asked of it.
struct KeywordRow {
    intent: Intent,
    needles: &'static [&'static str],
}

const KEYWORDS: &[KeywordRow] = &[
    KeywordRow {
        intent: Intent::Voice,
        needles: &[
            ".mp3",
            ".wav",
            ".m4a",
            ".ogg",
            ".flac",
            ".opus",
            ".aac",
            "transcribe",
            "recording",
            "voice note",
            "voice memo",
            "audio",
            "podcast",
            "sprachnachricht",
        ],
    },
    KeywordRow {
        intent: Intent::Vision,
        needles: &[
            ".png",
            ".jpg",
            ".jpeg",
            ".heic",
            ".gif",
            ".webp",
            ".svg",
            ".bmp",
            ".tif",
            "screenshot",
            "photo",
            " pic ",
            "picture",
            "image",
            "scanned",
            "whiteboard",
            "visually",
        ],
    },
    KeywordRow {
        intent: Intent::Summarize,
        needles: &[
            "summar",
            "summer",
            "sumar",
            "gist",
            "tldr",
            "tl;dr",
            "short version",
            "boil it down",
            "resume el",
            "resumen",
            "résume",
            "résumé",
            "zusammenfass",
            "in a nutshell",
        ],
    },
    KeywordRow {
        intent: Intent::Related,
        needles: &[
            "related",
            "relevant to",
            "mention",
            "references",
            "referencing",
            "other files",
            "other tickets",
            "belong to",
            "follow-up",
            "connected to",
            "関連",
            "相关",
            "which scripts read",
        ],
    },
    KeywordRow {
        intent: Intent::Explore,
        needles: &[
            "folder",
            "directory",
            "where did i put",
            "where is",
            "which files",
            "is there a file",
            "structure",
            "strucure",
            "what changed",
            "list the files",
            "list every",
            "top level",
        ],
    },
    KeywordRow {
        intent: Intent::Report,
        needles: &[
            "report",
            "reprot",
            "total",
            "by category",
            "per day",
            "per month",
            "by region",
            "how many",
            "count",
            "average",
            "table",
            "sorted",
            "plot",
            "lowest",
            "highest",
            "отчёт",
            "отчет",
            "сумма",
        ],
    },
];

/// The keyword table's route for `text`, and whether a keyword matched (else `general`).
pub fn keyword_route(text: &str) -> (Intent, bool) {
    let lower = format!(" {} ", text.to_lowercase());
    KEYWORDS
        .iter()
        .find(|row| {
            row.needles
                .iter()
                .any(|needle| starts_a_word(&lower, needle))
        })
        .map(|row| (row.intent, true))
        .unwrap_or((Intent::General, false))
}

/// `needle` occurs in `text` at the start of a word, so `count` is found in `counts` but not in
/// `acountants`. A needle that starts with a letter of a script written without spaces (関連)
/// may start anywhere.
fn starts_a_word(text: &str, needle: &str) -> bool {
    let spaced = needle
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    text.match_indices(needle).any(|(at, _)| {
        !spaced
            || text[..at]
                .chars()
                .next_back()
                .is_none_or(|before| !before.is_alphanumeric())
    })
}

/// The request the decision model is asked: the fixed instruction and examples, then the
/// clipped message. Nothing follows the message, so only its own tokens are evaluated per
/// request.
pub fn route_request(text: &str) -> ChooseRequest {
    let (clipped, _) = clip_chars(text, ROUTE_CLIP_CHARS);
    let mut messages = Vec::with_capacity(ROUTE_EXAMPLES.len() * 2 + 2);
    messages.push(ChatMessage::system(ROUTE_INSTRUCTION));
    for (example, intent) in ROUTE_EXAMPLES {
        messages.push(ChatMessage::user(format!("{REQUEST_LEAD}{example}")));
        messages.push(ChatMessage::assistant(label_word(intent)));
    }
    messages.push(ChatMessage::user(format!("{REQUEST_LEAD}{clipped}")));
    ChooseRequest {
        prompt: Prompt::chat(messages),
        labels: ROUTE_LABELS
            .iter()
            .map(|(_, word)| word.to_string())
            .collect(),
    }
}

/// Routes one message; see the module's note. Never fails: an unusable model is an `outage`
/// route on keywords with the reason in `note`.
pub fn route(text: &str, decider: Option<&mut dyn Model>) -> Route {
    route_with_deadline(text, decider, Duration::from_millis(DECISION_TIMEOUT_MS))
}

/// [`route`] with a chosen deadline for the model's answer (tests, benches).
pub fn route_with_deadline(
    text: &str,
    decider: Option<&mut dyn Model>,
    deadline: Duration,
) -> Route {
    let started = Instant::now();
    let (keyword_intent, matched) = keyword_route(text);
    let keyword_bps = if matched {
        KEYWORD_MATCH_BPS
    } else {
        KEYWORD_FALLBACK_BPS
    };
    let mut route = Route {
        intent: keyword_intent,
        source: RouteSource::Keyword,
        confidence_bps: keyword_bps,
        keyword_intent,
        probabilities: Vec::new(),
        label_mass: None,
        note: None,
        latency_ms: 0.0,
    };
    let finish = |mut route: Route| {
        route.latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        route
    };
    if text.chars().count() < SHORT_MESSAGE_CHARS {
        route.source = RouteSource::ShortMessage;
        return finish(route);
    }
    let Some(model) = decider else {
        route.source = RouteSource::Outage;
        route.note = Some("no decision model; the keyword route stands".into());
        return finish(route);
    };
    let reply = match choose_by(model, &route_request(text), deadline) {
        Decision::Reply(reply) => reply,
        Decision::Late { elapsed_ms } => {
            route.source = RouteSource::Outage;
            route.note = Some(format!(
                "the decision model took {elapsed_ms:.0} ms, over the {} ms limit; the keyword \
                 route stands",
                deadline.as_millis()
            ));
            return finish(route);
        }
        Decision::Failed(error) => {
            route.source = RouteSource::Outage;
            route.note = Some(format!(
                "the decision model failed ({error}); the keyword route stands"
            ));
            return finish(route);
        }
    };
    route.label_mass = reply.label_mass;
    // Reported under the intents' names, whatever word the model was offered.
    route.probabilities = ROUTE_LABELS
        .iter()
        .map(|(intent, word)| LabelProbability {
            label: intent.as_str().to_string(),
            probability: reply
                .probabilities
                .iter()
                .find(|p| p.label == *word)
                .map_or(0.0, |p| p.probability),
        })
        .collect();
    // The best declared label; ties go to the earlier intent in Intent::ALL.
    let mut best: Option<(Intent, u32)> = None;
    for intent in Intent::ALL {
        let bps = bps_of(&reply, label_word(intent));
        if best.is_none_or(|(_, b)| bps > b) {
            best = Some((intent, bps));
        }
    }
    let Some((model_intent, model_bps)) = best else {
        return finish(route);
    };
    if model_bps < ROUTE_FLOOR_BPS {
        route.source = RouteSource::Floor;
        route.note = Some(format!(
            "the decision model's best label, {model_intent} at {model_bps} bps, is below the \
             {ROUTE_FLOOR_BPS} bps floor; the keyword route stands"
        ));
    } else if model_intent == Intent::General && keyword_intent != Intent::General {
        route.source = RouteSource::Keyword;
        route.note = Some(format!(
            "the decision model said general at {model_bps} bps; general never overrides the \
             keyword route {keyword_intent}"
        ));
    } else if model_intent == keyword_intent {
        route.source = RouteSource::Keyword;
        route.confidence_bps = model_bps;
    } else {
        route.intent = model_intent;
        route.source = RouteSource::Model;
        route.confidence_bps = model_bps;
    }
    finish(route)
}
