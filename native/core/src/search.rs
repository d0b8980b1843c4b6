//! The search: given the files to read (freshfs's own listing, so the ignore rules stay
//! freshfs's) and the patterns, every file opened, read and searched with ripgrep's own
//! searcher and regex engine on threads of the core's own, its records returned in the order
//! of the files given. A cancelled or timed-out search stops between files.

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkFinish,
    SinkMatch,
};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
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

pub struct Options {
    pub ignore_case: bool,
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
    /** A larger file is not read (`too-large`). */
    pub max_file_size: u64,
}

/// Record kinds in the answer.
const MATCH: u8 = 0;
const BEFORE: u8 = 1;
const AFTER: u8 = 2;

/// File flags in the answer.
const FLAG_BINARY: u8 = 1;
/** Not opened or not read: the binary offset field holds the errno. */
const FLAG_ERROR: u8 = 2;
/** Over `max_file_size`: the binary offset field holds its size. */
const FLAG_TOO_LARGE: u8 = 4;

/**
 * A listed file, opened as the JavaScript workers open it: a link there now is not followed, and
 * a FIFO swapped in does not block the open (and is not read: it is not a regular file).
 */
fn open(path: &str) -> Result<File, i32> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/**
 * Whether the open file is under `prefix` (the root and a slash), by the kernel's own name for
 * it: a directory above it swapped for a link between the walk and the open leads elsewhere.
 */
fn opens_inside(file: &File, prefix: &str) -> bool {
    match std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
        Ok(target) => target.to_str().map_or(false, |t| t.starts_with(prefix)),
        // No /proc: the check cannot be made, as in the workers.
        Err(_) => true,
    }
}

pub fn matcher(patterns: &[String], options: &Options) -> Result<RegexMatcher, String> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(options.ignore_case)
        .word(options.word)
        .line_terminator(Some(b'\n'));
    let joined = if options.fixed_strings {
        patterns.iter().map(|p| regex_syntax_escape(p)).collect::<Vec<_>>().join("|")
    } else if patterns.len() == 1 {
        patterns[0].clone()
    } else {
        patterns.iter().map(|p| format!("(?:{})", p)).collect::<Vec<_>>().join("|")
    };
    let joined = if options.line_regexp { format!("^(?:{})$", joined) } else { joined };
    builder.build(&joined).map_err(|e| e.to_string())
}

fn regex_syntax_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One file's records, encoded as the answer holds them.
struct FileSink<'a> {
    out: Vec<u8>,
    records: u32,
    matches: u64,
    binary_at: Option<u64>,
    max_count: Option<u64>,
    binary: Binary,
    stop: &'a AtomicBool,
}

impl FileSink<'_> {
    fn record(&mut self, kind: u8, line: Option<u64>, offset: u64, bytes: &[u8]) {
        self.out.push(kind);
        self.out.extend_from_slice(&line.unwrap_or(0).to_le_bytes());
        self.out.extend_from_slice(&offset.to_le_bytes());
        self.out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.out.extend_from_slice(bytes);
        self.records += 1;
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.record(MATCH, mat.line_number(), mat.absolute_byte_offset(), mat.bytes());
        self.matches += 1;
        if let Some(max) = self.max_count {
            if self.matches >= max {
                return Ok(false);
            }
        }
        Ok(!self.stop.load(Ordering::Relaxed))
    }

    fn context(&mut self, _searcher: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        let kind = match ctx.kind() {
            SinkContextKind::Before => BEFORE,
            SinkContextKind::After => AFTER,
            SinkContextKind::Other => AFTER,
        };
        self.record(kind, ctx.line_number(), ctx.absolute_byte_offset(), ctx.bytes());
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, offset: u64) -> Result<bool, io::Error> {
        self.binary_at = Some(offset);
        Ok(self.binary != Binary::Quit && self.binary != Binary::Skip)
    }

    fn finish(&mut self, _searcher: &Searcher, _finish: &SinkFinish) -> Result<(), io::Error> {
        Ok(())
    }
}

fn searcher(options: &Options) -> Searcher {
    let detection = match options.binary {
        Binary::Text => BinaryDetection::none(),
        Binary::Skip | Binary::Quit => BinaryDetection::quit(b'\x00'),
        Binary::Report => BinaryDetection::convert(b'\x00'),
    };
    SearcherBuilder::new()
        .binary_detection(detection)
        .line_number(true)
        .before_context(options.before)
        .after_context(options.after)
        .invert_match(options.invert)
        .memory_map(MmapChoice::never())
        .build()
}

/// Searches `paths` (relative to `prefix`, the root and a slash; in this order in the answer);
/// `cancel` (set to non-zero) stops between files. The answer: u32 files; per file with
/// records, a match or a flag: u32 index, u8 flags, u64 binary offset (or the errno, or the
/// size: see the flags), u64 matching lines, u32 records, then each record: u8 kind, u64 line,
/// u64 byte offset, u32 length, the line's bytes. Then u8 1 when stopped early (cancelled or
/// timed out), else 0.
pub fn search(
    prefix: &str,
    paths: &[String],
    matcher: &RegexMatcher,
    options: &Options,
    cancel: &AtomicU8,
) -> Vec<u8> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let slots: Vec<Mutex<Option<Vec<u8>>>> = (0..paths.len()).map(|_| Mutex::new(None)).collect();
    let threads = options.threads.max(1).min(paths.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut searcher = searcher(options);
                loop {
                    if cancel.load(Ordering::Relaxed) != 0
                        || options.timeout.map_or(false, |t| started.elapsed() > t)
                    {
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                    let at = next.fetch_add(1, Ordering::Relaxed);
                    if at >= paths.len() {
                        return;
                    }
                    let mut sink = FileSink {
                        out: Vec::new(),
                        records: 0,
                        matches: 0,
                        binary_at: None,
                        max_count: options.max_count,
                        binary: options.binary,
                        stop: &stop,
                    };
                    let path = format!("{}{}", prefix, paths[at]);
                    let mut flags = 0u8;
                    let mut detail = 0u64;
                    match open(&path) {
                        Err(errno) => {
                            flags |= FLAG_ERROR;
                            detail = errno as u64;
                        }
                        Ok(file) => match file.metadata() {
                            Err(e) => {
                                flags |= FLAG_ERROR;
                                detail = e.raw_os_error().unwrap_or(libc::EIO) as u64;
                            }
                            Ok(meta) if !meta.file_type().is_file() => {
                                flags |= FLAG_ERROR;
                                detail = libc::EINVAL as u64;
                            }
                            Ok(meta) if meta.size() > options.max_file_size => {
                                flags |= FLAG_TOO_LARGE;
                                detail = meta.size();
                            }
                            Ok(_) => {
                                if searcher.search_file(matcher, &file, &mut sink).is_err() {
                                    flags |= FLAG_ERROR;
                                    detail = libc::EIO as u64;
                                }
                                let found = sink.records > 0 || sink.binary_at.is_some();
                                if found && !opens_inside(&file, prefix) {
                                    continue;
                                }
                            }
                        },
                    }
                    if sink.records == 0 && sink.binary_at.is_none() && flags == 0 {
                        continue;
                    }
                    let mut file = Vec::with_capacity(25 + sink.out.len());
                    file.extend_from_slice(&(at as u32).to_le_bytes());
                    if sink.binary_at.is_some() {
                        flags |= FLAG_BINARY;
                    }
                    file.push(flags);
                    file.extend_from_slice(&sink.binary_at.unwrap_or(detail).to_le_bytes());
                    file.extend_from_slice(&sink.matches.to_le_bytes());
                    file.extend_from_slice(&sink.records.to_le_bytes());
                    file.extend_from_slice(&sink.out);
                    *slots[at].lock().unwrap() = Some(file);
                }
            });
        }
    });
    let mut out = Vec::new();
    let mut files = 0u32;
    out.extend_from_slice(&0u32.to_le_bytes());
    for slot in slots {
        if let Some(file) = slot.into_inner().unwrap() {
            out.extend_from_slice(&file);
            files += 1;
        }
    }
    out[0..4].copy_from_slice(&files.to_le_bytes());
    out.push(stop.load(Ordering::Relaxed) as u8);
    out
}
