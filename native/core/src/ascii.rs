//! The ASCII lane: a faster way to find the lines of an all-ASCII file that a pattern without a
//! literal matches (`\w{5}\s+\w{5}…`, `\p{Greek}`), with the same answer as the pattern's own
//! matcher.
//!
//! In a text of ASCII bytes a class can only match its ASCII members, so the pattern with every
//! class cut down to them (and to no line break, as grep-regex cuts them) matches exactly the
//! same lines there. Cut down, it compiles to a small fully built DFA (`regex-automata`), which
//! is scanned over two halves of the text at once: each byte's step waits on the last one's, and
//! two independent scans fill the time between (measured on the kernel tree: 1.17 s against
//! 1.88 s for Rust's regex over the same bytes, one thread). A class with no ASCII member at all
//! makes a pattern that no ASCII text matches (`\p{Greek}`): those files need no scan.
//!
//! Only a pattern whose literal prefilter would have nothing to look for takes the lane: any
//! literal character, or a class of fewer than five members (grep-regex takes those for
//! literals), keeps the pattern on its own matcher, which finds the literal first and runs the
//! regex only near it. So do anchors and word boundaries (this DFA has none), `-w`, `-x` and
//! `-S` (which grep-regex builds its own way).

use crate::search::Options;
use grep_matcher::{LineMatchKind, LineTerminator, Match, Matcher, NoError};
use grep_regex::{RegexCaptures, RegexMatcher};
use regex_automata::{dense, DenseDFA, DFA};
use regex_syntax::hir::{self, Class, Hir, HirKind};
use regex_syntax::ParserBuilder;

/// The DFA as it is scanned: state ids premultiplied (a step is one load), 16 bits wide.
type Table = DenseDFA<Vec<u16>, u16>;

/// The most states the lane's DFA may have. A DFA can take exponentially many states for its
/// pattern (`[a-z]*[a-m][a-z]{20}`), and its construction cannot be stopped: 65,535 states took
/// 550 ms and 131 MB. So the DFA is first built with 8-bit ids, which fails at the 256th state
/// (2 ms at most for the patterns that did), and only a DFA that fits is built for the scan.
/// `\w{5}\s+\w{5}\s+\w{5}\s+\w{5}\s+\w{5}` takes 93.
type Probe = DenseDFA<Vec<u8>, u8>;

/// The widest pattern tried for the lane (its classes counted as often as a repetition repeats
/// them): its NFA alone would be costly to build, and its DFA too large for the lane anyway.
const WIDEST: u64 = 256;

/// A class with fewer members is a literal to grep-regex, which looks for it first.
const FEWEST_MEMBERS: u32 = 5;

/// Below this many bytes a text is scanned as one: splitting it would not pay.
const TWO_SCANS: usize = 4096;

pub struct Lane {
    /// None: no ASCII text matches the pattern.
    dfa: Option<Table>,
}

impl Lane {
    /// The lane for `pattern` (as `search::matcher` joins the patterns), when it can take one.
    pub fn new(pattern: &str, options: &Options) -> Option<Lane> {
        if options.word || options.line_regexp || (options.smart_case && !options.ignore_case) {
            return None;
        }
        // As grep-regex parses it (config.rs): rg's flags, invalid UTF-8 allowed.
        let hir = ParserBuilder::new()
            .allow_invalid_utf8(true)
            .case_insensitive(options.ignore_case)
            .multi_line(true)
            .unicode(true)
            .octal(false)
            .build()
            .parse(pattern)
            .ok()?;
        let ascii = cut(&hir)?;
        if !can_match(&ascii) {
            return Some(Lane { dfa: None });
        }
        if width(&ascii) > WIDEST {
            return None;
        }
        let pattern = ascii.to_string();
        let mut builder = dense::Builder::new();
        builder.allow_invalid_utf8(true).byte_classes(true).premultiply(false);
        let _fits: Probe = builder.build_with_size::<u8>(&pattern).ok()?;
        let dfa = builder.premultiply(true).build_with_size::<u16>(&pattern).ok()?;
        Some(Lane { dfa: Some(dfa) })
    }

    /// The matcher for an all-ASCII text: the lane's scan, `full` for match positions.
    pub fn matcher<'a>(&'a self, full: &'a RegexMatcher) -> LaneMatcher<'a> {
        LaneMatcher { lane: self, full }
    }
}

/// `hir` with every class cut down to its ASCII members other than `\n`; None when the pattern
/// is not one for the lane (see the module comment).
fn cut(hir: &Hir) -> Option<Hir> {
    Some(match hir.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(_) | HirKind::Anchor(_) | HirKind::WordBoundary(_) => return None,
        HirKind::Class(Class::Unicode(class)) => {
            let mut ascii = hir::ClassUnicode::new([
                hir::ClassUnicodeRange::new('\0', '\t'),
                hir::ClassUnicodeRange::new('\x0b', '\x7f'),
            ]);
            ascii.intersect(class);
            let members: u32 = ascii.iter().map(|r| r.end() as u32 - r.start() as u32 + 1).sum();
            if members > 0 && members < FEWEST_MEMBERS {
                return None;
            }
            Hir::class(Class::Unicode(ascii))
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut ascii = hir::ClassBytes::new([
                hir::ClassBytesRange::new(0, b'\t'),
                hir::ClassBytesRange::new(0x0b, 0x7f),
            ]);
            ascii.intersect(class);
            let members: u32 = ascii.iter().map(|r| r.end() as u32 - r.start() as u32 + 1).sum();
            if members > 0 && members < FEWEST_MEMBERS {
                return None;
            }
            Hir::class(Class::Bytes(ascii))
        }
        HirKind::Repetition(rep) => Hir::repetition(hir::Repetition {
            kind: rep.kind.clone(),
            greedy: rep.greedy,
            hir: Box::new(cut(&rep.hir)?),
        }),
        // Groups kept (not capturing): the pattern is printed again, and they hold its precedence.
        HirKind::Group(group) => {
            Hir::group(hir::Group { kind: hir::GroupKind::NonCapturing, hir: Box::new(cut(&group.hir)?) })
        }
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(cut).collect::<Option<Vec<_>>>()?),
        HirKind::Alternation(parts) => Hir::alternation(parts.iter().map(cut).collect::<Option<Vec<_>>>()?),
    })
}

/// How many classes `hir` spells out, each repetition counted as often as it may repeat (one
/// more time when it has no bound), saturating.
fn width(hir: &Hir) -> u64 {
    match hir.kind() {
        HirKind::Class(_) => 1,
        HirKind::Repetition(rep) => {
            let times = match rep.kind {
                hir::RepetitionKind::ZeroOrOne => 1,
                hir::RepetitionKind::ZeroOrMore | hir::RepetitionKind::OneOrMore => 2,
                hir::RepetitionKind::Range(hir::RepetitionRange::Exactly(n)) => n as u64,
                hir::RepetitionKind::Range(hir::RepetitionRange::AtLeast(n)) => n as u64 + 1,
                hir::RepetitionKind::Range(hir::RepetitionRange::Bounded(_, n)) => n as u64,
            };
            width(&rep.hir).saturating_mul(times)
        }
        HirKind::Group(group) => width(&group.hir),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => {
            parts.iter().map(width).fold(0, u64::saturating_add)
        }
        _ => 0,
    }
}

/// Whether any text matches `hir` (an empty class matches none).
fn can_match(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class.iter().next().is_some(),
        HirKind::Class(Class::Bytes(class)) => class.iter().next().is_some(),
        HirKind::Repetition(rep) => {
            let optional = match rep.kind {
                hir::RepetitionKind::ZeroOrOne | hir::RepetitionKind::ZeroOrMore => true,
                hir::RepetitionKind::OneOrMore => false,
                hir::RepetitionKind::Range(hir::RepetitionRange::Exactly(n)) => n == 0,
                hir::RepetitionKind::Range(hir::RepetitionRange::AtLeast(n)) => n == 0,
                hir::RepetitionKind::Range(hir::RepetitionRange::Bounded(n, _)) => n == 0,
            };
            optional || can_match(&rep.hir)
        }
        HirKind::Group(group) => can_match(&group.hir),
        HirKind::Concat(parts) => parts.iter().all(can_match),
        HirKind::Alternation(parts) => parts.iter().any(can_match),
        _ => true,
    }
}

/// The lane as grep-searcher asks a matcher: which line matches first, and does this line match.
/// What needs a match's place (`--count-matches`) is the pattern's own matcher's, which answers
/// alike on an ASCII text.
pub struct LaneMatcher<'a> {
    lane: &'a Lane,
    full: &'a RegexMatcher,
}

impl LaneMatcher<'_> {
    /// The end of the first match (its shortest form) in `text` from `at`, as grep-searcher's
    /// line search asks (its line holds that offset).
    fn first(&self, text: &[u8], at: usize) -> Option<usize> {
        let dfa = self.lane.dfa.as_ref()?;
        let text = &text[at..];
        let end = match dfa {
            DenseDFA::PremultipliedByteClass(table) => first_end(table, text),
            other => first_end(other, text),
        };
        end.map(|end| at + end)
    }
}

impl Matcher for LaneMatcher<'_> {
    type Captures = RegexCaptures;
    type Error = NoError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, NoError> {
        self.full.find_at(haystack, at)
    }

    fn new_captures(&self) -> Result<RegexCaptures, NoError> {
        self.full.new_captures()
    }

    fn capture_count(&self) -> usize {
        self.full.capture_count()
    }

    fn capture_index(&self, name: &str) -> Option<usize> {
        self.full.capture_index(name)
    }

    fn captures_at(&self, haystack: &[u8], at: usize, caps: &mut RegexCaptures) -> Result<bool, NoError> {
        self.full.captures_at(haystack, at, caps)
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, NoError> {
        Ok(self.first(haystack, at))
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        self.full.line_terminator()
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, NoError> {
        Ok(self.first(haystack, 0).map(LineMatchKind::Confirmed))
    }
}

/// Where the first match in `text` ends (regex-automata's `shortest_match`), two halves of a
/// long text scanned at once. Since no match spans a line break, the halves meet at one, and a
/// match in the first half comes before any in the second.
fn first_end<D: DFA>(dfa: &D, text: &[u8]) -> Option<usize> {
    let start = dfa.start_state();
    if dfa.is_match_or_dead_state(start) {
        return if dfa.is_dead_state(start) { None } else { Some(0) };
    }
    let half = text.len() / 2;
    let split = match memchr::memchr(b'\n', &text[half..]) {
        Some(at) if text.len() >= TWO_SCANS => half + at + 1,
        _ => return scan(dfa, start, text, 0),
    };
    let (a, b) = text.split_at(split);
    let both = a.len().min(b.len());
    let (mut s, mut t) = (start, start);
    for i in 0..both {
        // SAFETY: i is below both lengths, and every state id the DFA gives is valid in it.
        unsafe {
            s = dfa.next_state_unchecked(s, *a.get_unchecked(i));
            t = dfa.next_state_unchecked(t, *b.get_unchecked(i));
        }
        let (a_done, b_done) = (dfa.is_match_or_dead_state(s), dfa.is_match_or_dead_state(t));
        if a_done || b_done {
            if a_done && !dfa.is_dead_state(s) {
                return Some(i + 1);
            }
            // The first half has no match before here: it still decides, if it has one later.
            if !a_done {
                if let Some(end) = scan(dfa, s, a, i + 1) {
                    return Some(end);
                }
            }
            if b_done {
                return if dfa.is_dead_state(t) { None } else { Some(split + i + 1) };
            }
            return scan(dfa, t, b, i + 1).map(|end| split + end);
        }
    }
    scan(dfa, s, a, both).or_else(|| scan(dfa, t, b, both).map(|end| split + end))
}

/// The first match's end in `text`, scanning on from `from` in `state`.
fn scan<D: DFA>(dfa: &D, mut state: D::ID, text: &[u8], from: usize) -> Option<usize> {
    for (i, &byte) in text[from..].iter().enumerate() {
        // SAFETY: every state id the DFA gives is valid in it.
        state = unsafe { dfa.next_state_unchecked(state, byte) };
        if dfa.is_match_or_dead_state(state) {
            return if dfa.is_dead_state(state) { None } else { Some(from + i + 1) };
        }
    }
    None
}
