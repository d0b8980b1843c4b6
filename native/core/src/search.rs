//! The search: given the files to read (freshfs's own listing, so the ignore rules stay
//! freshfs's) and the patterns, every file opened, read and searched with ripgrep's own
//! searcher and regex engine on threads of the core's own, its records returned in the order
//! of the files given. Each file is searched as the JavaScript engine (`search/grep/engine.ts`,
//! `searchBuffer`) searches it: the same binary modes, UTF-16 transcoding, byte order mark,
//! size bound, `-m` with trailing context and `--count-matches`, so that both paths answer alike.

use crate::ascii::Lane;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkFinish,
    SinkMatch,
};
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a file with a NUL byte gets, as freshfs's `BinaryMode`.
#[derive(Clone, Copy, PartialEq)]
pub enum Binary {
    Skip,
    Quit,
    Report,
    Text,
}

/// What is reported of a file, as freshfs's `SearchMode`.
#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    Content,
    FilesWithMatches,
    Count,
}

pub struct Options {
    pub ignore_case: bool,
    pub smart_case: bool,
    pub word: bool,
    pub fixed_strings: bool,
    pub invert: bool,
    pub line_regexp: bool,
    pub max_count: Option<u64>,
    pub before: usize,
    pub after: usize,
    pub binary: Binary,
    pub threads: usize,
    pub timeout: Option<Duration>,
    /// A larger file is not read (`too-large`).
    pub max_file_size: u64,
    pub mode: Mode,
    /// `count` mode counts matches, not lines.
    pub count_matches: bool,
    /// Links are followed (`-L`): opened through, and not checked to stay under the root.
    pub follow: bool,
    /// Once the answer holds this many bytes, no further file is begun (the caller asks again
    /// from where it stopped): the memory an answer takes is bounded.
    pub max_answer_bytes: usize,
    /// Panics inside the search, to prove that a panic reaches the caller as an error.
    pub panic: bool,
}

/// Record kinds in the answer.
const MATCH: u8 = 0;
const CONTEXT: u8 = 1;

/// File flags in the answer.
/// Matched, and holds a NUL at the offset given (`quit`, `report`).
const FLAG_BINARY_AT: u8 = 1;
/// Not opened or not read: the detail field holds the errno.
const FLAG_ERROR: u8 = 2;
/// Over `max_file_size`: the detail field holds its size.
const FLAG_TOO_LARGE: u8 = 4;
/// Left out as binary (`skip`, or `quit` with nothing before the NUL).
const FLAG_BINARY: u8 = 8;

const NEWLINE: u8 = b'\n';
/// ripgrep's first look: a NUL in the first 8 KiB makes a file binary.
const BINARY_PROBE: usize = 8192;
/// rg's read buffer, which decides what `quit` searches of a binary file (engine.ts).
const RG_BUFFER: usize = 64 * 1024;
/// A file's buffer is kept for the next file up to this size, as the workers keep theirs.
const KEPT_BYTES: usize = 1024 * 1024;

/// The root, opened once for the search: each file is opened relative to it (`openat`), which
/// spares the kernel the root's own components at every open.
struct Root(libc::c_int);

impl Root {
    fn open(prefix: &[u8]) -> Result<Root, i32> {
        let path = CString::new(prefix).map_err(|_| libc::EINVAL)?;
        // SAFETY: a valid C string; the descriptor is closed on drop.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
        }
        Ok(Root(fd))
    }

    /// A listed file, opened as the JavaScript workers open it: a link there now is not
    /// followed (unless links are), and a FIFO swapped in does not block the open.
    fn file(&self, path: &[u8], follow: bool) -> Result<File, i32> {
        let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | if follow { 0 } else { libc::O_NOFOLLOW };
        let path = CString::new(path).map_err(|_| libc::EINVAL)?;
        // SAFETY: a valid C string and an open directory; the File owns the new descriptor.
        let fd = unsafe { libc::openat(self.0, path.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
        }
        Ok(unsafe { File::from_raw_fd(fd) })
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this Root's own.
        unsafe { libc::close(self.0) };
    }
}

/// Whether the open file is under `prefix` (the root and a slash), by the kernel's own name for
/// it: a directory above it swapped for a link between the walk and the open leads elsewhere.
fn opens_inside(file: &File, prefix: &[u8]) -> bool {
    match std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
        Ok(target) => target.as_os_str().as_bytes().starts_with(prefix),
        // No /proc: the check cannot be made, as in the workers.
        Err(_) => true,
    }
}

/// The patterns as one, as rg joins them: `-F` escaped, several as one alternation, `-x` as
/// `^(?:…)$`.
pub fn joined(patterns: &[String], options: &Options) -> String {
    let own: Vec<String> = if options.fixed_strings {
        patterns.iter().map(|p| regex::escape(p)).collect()
    } else {
        patterns.to_vec()
    };
    let joined = if own.is_empty() {
        // No patterns (`-f` of an empty file) match nothing, as rg's.
        "[^\\s\\S]".to_string()
    } else if own.len() == 1 {
        own[0].clone()
    } else {
        own.iter().map(|p| format!("(?:{})", p)).collect::<Vec<_>>().join("|")
    };
    if options.line_regexp {
        format!("^(?:{})$", joined)
    } else {
        joined
    }
}

pub fn matcher(pattern: &str, options: &Options) -> Result<RegexMatcher, String> {
    let mut builder = RegexMatcherBuilder::new();
    // As rg configures it: `^`/`$` at line ends, no line break ever matched.
    builder
        .case_insensitive(options.ignore_case)
        .case_smart(options.smart_case && !options.ignore_case)
        .multi_line(true)
        .word(options.word && !options.line_regexp)
        .line_terminator(Some(NEWLINE));
    builder.build(pattern).map_err(|e| e.to_string())
}

/// One pass's records, encoded as the answer holds them.
struct FileSink<'a> {
    out: Vec<u8>,
    records: u32,
    /// Matching lines counted (or matches, with `count_matches`).
    matches: u64,
    /// Matching lines, against the `-m` limit.
    lines: u64,
    limit: u64,
    /// After the limit: the trailing context lines still to show.
    after_left: usize,
    keep: bool,
    count_matches: Option<&'a RegexMatcher>,
    stop: &'a AtomicBool,
}

impl<'a> FileSink<'a> {
    fn new(options: &Options, keep: bool, count: Option<&'a RegexMatcher>, stop: &'a AtomicBool) -> Self {
        let limit = match options.mode {
            Mode::FilesWithMatches => 1,
            _ => options.max_count.unwrap_or(u64::MAX),
        };
        FileSink {
            out: Vec::new(),
            records: 0,
            matches: 0,
            lines: 0,
            limit,
            after_left: options.after,
            keep,
            count_matches: count,
            stop,
        }
    }

    fn record(&mut self, kind: u8, line: Option<u64>, bytes: &[u8]) {
        if !self.keep {
            return;
        }
        let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        self.out.push(kind);
        self.out.extend_from_slice(&(line.unwrap_or(0) as u32).to_le_bytes());
        self.out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        self.out.extend_from_slice(text);
        self.records += 1;
    }

    /// A line after the limit: shown (a match as a match, as rg shows it) while context is left.
    fn trailing(&mut self, kind: u8, line: Option<u64>, bytes: &[u8]) -> bool {
        if self.after_left == 0 {
            return false;
        }
        self.record(kind, line, bytes);
        self.after_left -= 1;
        self.after_left > 0
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.lines >= self.limit {
            return Ok(self.trailing(MATCH, mat.line_number(), mat.bytes()));
        }
        self.record(MATCH, mat.line_number(), mat.bytes());
        self.lines += 1;
        self.matches += match self.count_matches {
            Some(matcher) => {
                let line = mat.bytes().strip_suffix(b"\n").unwrap_or(mat.bytes());
                let mut n = 0u64;
                let _ = matcher.find_iter(line, |_| {
                    n += 1;
                    true
                });
                n
            }
            None => 1,
        };
        if self.lines >= self.limit && (self.after_left == 0 || !self.keep) {
            return Ok(false);
        }
        Ok(!self.stop.load(Ordering::Relaxed))
    }

    fn context(&mut self, _searcher: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.lines >= self.limit {
            return Ok(self.trailing(CONTEXT, ctx.line_number(), ctx.bytes()));
        }
        if *ctx.kind() != SinkContextKind::Other {
            self.record(CONTEXT, ctx.line_number(), ctx.bytes());
        }
        Ok(true)
    }

    fn finish(&mut self, _searcher: &Searcher, _finish: &SinkFinish) -> Result<(), io::Error> {
        Ok(())
    }
}

fn searcher(options: &Options) -> Searcher {
    let content = options.mode == Mode::Content;
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::none())
        .line_number(content)
        .before_context(if content { options.before } else { 0 })
        .after_context(if content { options.after } else { 0 })
        .invert_match(options.invert)
        .memory_map(MmapChoice::never())
        .build()
}

/// What a file gave: a pass's records with its flags.
struct Found {
    flags: u8,
    detail: u64,
    matches: u64,
    records: u32,
    out: Vec<u8>,
}

impl Found {
    fn flagged(flags: u8, detail: u64) -> Found {
        Found { flags, detail, matches: 0, records: 0, out: Vec::new() }
    }
}

/// Most source files fit in the first read, which then needs no `fstat` (as in the workers).
const FIRST_READ: usize = 64 * 1024;

/// Reads into `buffer[at..]` until it is full or the file ends; how many bytes it holds then.
fn read_into(file: &File, buffer: &mut [u8], mut at: usize) -> io::Result<usize> {
    while at < buffer.len() {
        match file.read_at(&mut buffer[at..], at as u64) {
            Ok(0) => break,
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(at)
}

/// What reading a file gave: its bytes are in the buffer, or it is over the size bound.
enum Read {
    Whole,
    TooLarge(u64),
    /// A NUL in its first 8 KiB, where that makes it binary: the rest is not read.
    Binary,
}

/// Reads the open file whole into `buffer`: one read for a file under `FIRST_READ`, else (with
/// `probe`, unless its first 8 KiB make it binary) its size measured, bounded, and read (a file growing meanwhile is read to that size, one
/// truncated to where it ends now).
fn read(file: &File, max_file_size: u64, probe: bool, buffer: &mut Vec<u8>) -> io::Result<Read> {
    buffer.clear();
    buffer.reserve(FIRST_READ);
    // SAFETY: u8 has no invalid values; the bytes past what the reads filled are cut off
    // before the buffer is read.
    unsafe { buffer.set_len(FIRST_READ) };
    let first = match file.read_at(buffer, 0) {
        Ok(n) => n,
        Err(e) => {
            buffer.clear();
            return Err(e);
        }
    };
    if first < FIRST_READ && first as u64 <= max_file_size {
        buffer.truncate(first);
        return Ok(Read::Whole);
    }
    let size = file.metadata()?.len();
    if size > max_file_size {
        buffer.clear();
        return Ok(Read::TooLarge(size));
    }
    // A UTF-16 text has NULs in its bytes, and is looked at once transcoded.
    let utf16 = buffer.starts_with(&[0xff, 0xfe]) || buffer.starts_with(&[0xfe, 0xff]);
    if probe && !utf16 && memchr::memchr(0, &buffer[..BINARY_PROBE.min(first)]).is_some() {
        buffer.clear();
        return Ok(Read::Binary);
    }
    let end = (size as usize).max(first);
    buffer.reserve(end - buffer.len());
    unsafe { buffer.set_len(end) };
    let total = read_into(file, buffer, first);
    buffer.truncate(*total.as_ref().unwrap_or(&0));
    total.map(|_| Read::Whole)
}

/// A text that begins with a UTF-16 byte order mark, as UTF-8 (its mark dropped), as rg
/// transcodes it; None for any other.
fn transcoded(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.len() < 2 {
        return None;
    }
    let le = bytes[0] == 0xff && bytes[1] == 0xfe;
    let be = bytes[0] == 0xfe && bytes[1] == 0xff;
    if !le && !be {
        return None;
    }
    let body = &bytes[2..];
    let units = body.chunks_exact(2).map(|pair| {
        if le {
            u16::from_le_bytes([pair[0], pair[1]])
        } else {
            u16::from_be_bytes([pair[0], pair[1]])
        }
    });
    let mut text: String = char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).collect();
    if body.len() % 2 == 1 {
        text.push('\u{fffd}');
    }
    Some(text.into_bytes())
}

/// Where rg's read that brings the first NUL (at `nul`) begins (engine.ts `readWithNul`).
fn read_with_nul(buffer: &[u8], nul: usize) -> usize {
    let mut capacity = RG_BUFFER;
    let mut from = 0;
    let mut to = buffer.len().min(capacity);
    while nul >= to {
        let kept = to - buffer[..to].iter().rposition(|&b| b == NEWLINE).map_or(0, |p| p + 1);
        if kept >= capacity {
            capacity *= 2;
        }
        from = to;
        to = buffer.len().min(from + capacity - kept);
    }
    from
}

struct Pass<'a> {
    matcher: &'a RegexMatcher,
    /// The ASCII lane, for a pattern that takes one (`ascii.rs`).
    lane: Option<&'a Lane>,
    options: &'a Options,
    stop: &'a AtomicBool,
}

impl Pass<'_> {
    /// One search of `text`'s lines: the records (kept or not), the matches counted.
    fn run(&self, searcher: &mut Searcher, text: &[u8], keep: bool) -> FileSink<'_> {
        let count = (self.options.mode == Mode::Count && self.options.count_matches && !self.options.invert)
            .then_some(self.matcher);
        let mut sink = FileSink::new(self.options, keep, count, self.stop);
        let _ = match self.lane {
            Some(lane) if text.is_ascii() => searcher.search_slice(&lane.matcher(self.matcher), text, &mut sink),
            _ => searcher.search_slice(self.matcher, text, &mut sink),
        };
        sink
    }

    /// Searches a file's bytes as `searchBuffer` does (engine.ts), the whole file.
    fn file(&self, searcher: &mut Searcher, raw: &[u8]) -> Found {
        let converted = transcoded(raw);
        let mut buffer: &[u8] = converted.as_deref().unwrap_or(raw);
        let mode = self.options.binary;
        let content = self.options.mode == Mode::Content;
        let probe = &buffer[..buffer.len().min(BINARY_PROBE)];
        if (mode == Binary::Skip || mode == Binary::Quit) && memchr::memchr(0, probe).is_some() {
            return Found::flagged(FLAG_BINARY, 0);
        }
        let unconverted = buffer;
        let mut report_copy;
        let mut binary_at = None;
        if mode == Binary::Report {
            binary_at = memchr::memchr(0, buffer);
            if binary_at.is_some() {
                report_copy = buffer.to_vec();
                for b in report_copy.iter_mut().filter(|b| **b == 0) {
                    *b = NEWLINE;
                }
                buffer = &report_copy;
            }
        }
        let start = if buffer.starts_with(&[0xef, 0xbb, 0xbf]) { 3 } else { 0 };
        let sink = self.run(searcher, &buffer[start..], content && binary_at.is_none());
        if sink.lines == 0 {
            return Found::flagged(0, 0);
        }
        let found = |sink: FileSink, flags: u8, at: usize| Found {
            flags,
            detail: at as u64,
            matches: sink.matches,
            records: sink.records,
            out: sink.out,
        };
        if mode == Binary::Skip && memchr::memchr(0, &buffer[probe.len()..]).is_some() {
            return Found::flagged(FLAG_BINARY, 0);
        }
        if mode == Binary::Quit {
            if let Some(nul) = memchr::memchr(0, buffer) {
                let before = self.before_nul(searcher, buffer, nul);
                return if before.lines > 0 { found(before, FLAG_BINARY_AT, nul) } else { Found::flagged(FLAG_BINARY, 0) };
            }
        }
        if let Some(nul) = binary_at {
            let matches = sink.matches;
            if content {
                let before = self.before_nul(searcher, unconverted, nul);
                return Found { matches, ..found(before, FLAG_BINARY_AT, nul) };
            }
            return found(sink, FLAG_BINARY_AT, nul);
        }
        found(sink, 0, 0)
    }

    /// What rg reads of a binary file before it stops, searched as text (engine.ts `linesBefore`).
    fn before_nul(&self, searcher: &mut Searcher, buffer: &[u8], nul: usize) -> FileSink<'_> {
        let from = read_with_nul(buffer, nul);
        let end = if from == 0 { 0 } else { buffer[..from].iter().rposition(|&b| b == NEWLINE).map_or(0, |p| p + 1) };
        let text = &buffer[..end];
        let start = if text.starts_with(&[0xef, 0xbb, 0xbf]) { 3 } else { 0 };
        self.run(searcher, &text[start..], self.options.mode == Mode::Content)
    }
}

/// Opens, reads and searches one file; None when there is nothing to report of it.
fn search_one(
    pass: &Pass,
    searcher: &mut Searcher,
    root: &Root,
    prefix: &[u8],
    path: &[u8],
    scratch: &mut Vec<u8>,
) -> Option<Found> {
    let options = pass.options;
    let file = match root.file(path, options.follow) {
        Ok(file) => file,
        Err(errno) => return Some(Found::flagged(FLAG_ERROR, errno as u64)),
    };
    let probe = options.binary == Binary::Skip || options.binary == Binary::Quit;
    let found = match read(&file, options.max_file_size, probe, scratch) {
        Err(e) => Found::flagged(FLAG_ERROR, e.raw_os_error().unwrap_or(libc::EIO) as u64),
        Ok(Read::TooLarge(size)) => Found::flagged(FLAG_TOO_LARGE, size),
        Ok(Read::Binary) => Found::flagged(FLAG_BINARY, 0),
        Ok(Read::Whole) => {
            let found = pass.file(searcher, scratch);
            if scratch.capacity() > KEPT_BYTES {
                *scratch = Vec::new();
            }
            found
        }
    };
    if found.flags == 0 && found.matches == 0 && found.records == 0 {
        return None;
    }
    if !options.follow && !opens_inside(&file, prefix) {
        return None;
    }
    Some(found)
}

/// Searches `paths` (NUL-separated, relative to `prefix`, the root and a slash; in this order in
/// the answer); `cancel` (set to non-zero) stops between files, as the timeout does, and so
/// does an answer grown past its bound. The answer: u32 files listed; per file with something
/// to report: u32 index, u8 flags, u64 detail (the NUL's offset, the errno or the size: see the
/// flags), u64 matches, u32 records, then each record: u8 kind, u32 line, u32 length, the line's
/// bytes without its line break. Then u32 how many files are done (every one before it), and
/// u8 1 when cancelled or timed out (the answer is partial), else 0.
pub fn search(
    prefix: &[u8],
    paths: &[u8],
    matcher: &RegexMatcher,
    lane: Option<&Lane>,
    options: &Options,
    cancel: &AtomicU8,
) -> Result<Vec<u8>, i32> {
    let root = Root::open(prefix)?;
    let paths: Vec<&[u8]> = if paths.is_empty() { Vec::new() } else { paths.split(|&b| b == 0).collect() };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let full = AtomicBool::new(false);
    let bytes = AtomicUsize::new(0);
    let started = Instant::now();
    let slots: Vec<Mutex<Option<Found>>> = (0..paths.len()).map(|_| Mutex::new(None)).collect();
    let threads = options.threads.max(1).min(paths.len().max(1));
    let pass = Pass { matcher, lane, options, stop: &stop };
    if options.panic {
        panic!("asked to panic");
    }
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut searcher = searcher(options);
                let mut scratch = Vec::new();
                loop {
                    if cancel.load(Ordering::Relaxed) != 0 || options.timeout.map_or(false, |t| started.elapsed() > t) {
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                    if full.load(Ordering::Relaxed) {
                        return;
                    }
                    let at = next.fetch_add(1, Ordering::Relaxed);
                    if at >= paths.len() {
                        return;
                    }
                    if let Some(found) = search_one(&pass, &mut searcher, &root, prefix, paths[at], &mut scratch) {
                        if bytes.fetch_add(found.out.len() + 25, Ordering::Relaxed) + found.out.len() > options.max_answer_bytes {
                            full.store(true, Ordering::Relaxed);
                        }
                        *slots[at].lock().unwrap() = Some(found);
                    }
                }
            });
        }
    });
    // Every file fetched was finished before its thread looked at the stops again.
    let done = next.load(Ordering::Relaxed).min(paths.len());
    let mut out = Vec::with_capacity(bytes.load(Ordering::Relaxed) + 9);
    let mut files = 0u32;
    out.extend_from_slice(&0u32.to_le_bytes());
    for (at, slot) in slots.into_iter().enumerate().take(done) {
        if let Some(found) = slot.into_inner().unwrap() {
            out.extend_from_slice(&(at as u32).to_le_bytes());
            out.push(found.flags);
            out.extend_from_slice(&found.detail.to_le_bytes());
            out.extend_from_slice(&found.matches.to_le_bytes());
            out.extend_from_slice(&found.records.to_le_bytes());
            out.extend_from_slice(&found.out);
            files += 1;
        }
    }
    out[0..4].copy_from_slice(&files.to_le_bytes());
    out.extend_from_slice(&(done as u32).to_le_bytes());
    out.push(stop.load(Ordering::Relaxed) as u8);
    Ok(out)
}
