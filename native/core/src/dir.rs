//! One directory read for the walk (`src/scan/read-dir.ts`): opened with O_NOFOLLOW|O_DIRECTORY,
//! so that a link or a file swapped in since its parent was read is refused by the open itself,
//! measured with `fstat` on that descriptor, and its entries read with `getdents64`. Node's own
//! way takes an `lstat` and a `scandir` (which opens it again, and allocates every entry), and a
//! JavaScript object an entry: measured on the kernel tree, a walk of 5,093 directories spent
//! 16 ms in `lstat` alone.

use std::ffi::CString;
use std::io;

/// What an entry is, as the walk asks: `d_type`, or an `fstatat` where the file system leaves it
/// unknown.
pub const FILE: u8 = 0;
pub const DIR: u8 = 1;
pub const SYMLINK: u8 = 2;
pub const OTHER: u8 = 3;

pub struct Dir {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    /// The names, each followed by a `/` (which no name holds); empty when not read (`listed`).
    pub names: Vec<u8>,
    pub kinds: Vec<u8>,
    /// False when the directory was larger than asked: only its numbers were read.
    pub listed: bool,
}

struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this Fd's own.
        unsafe { libc::close(self.0) };
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Reads the directory at `path` (absolute, as bytes): its entries unless it is larger than
/// `largest` bytes (as `fstat` gives its size), when only its numbers are returned. Err: the
/// errno, ELOOP or ENOTDIR when it is no longer a directory.
pub fn read(path: &[u8], largest: u64) -> Result<Dir, i32> {
    let c = CString::new(path).map_err(|_| libc::EINVAL)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid C string; the descriptor is owned by Fd.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return Err(errno());
    }
    let fd = Fd(fd);
    // SAFETY: a zeroed stat is a valid out parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.0, &mut st) } != 0 {
        return Err(errno());
    }
    let mut dir = Dir {
        dev: st.st_dev,
        ino: st.st_ino,
        size: st.st_size as u64,
        names: Vec::new(),
        kinds: Vec::new(),
        listed: st.st_size as u64 <= largest,
    };
    if !dir.listed {
        return Ok(dir);
    }
    // Not zeroed (32 KiB a directory was a tenth of the call): getdents64 fills what it returns,
    // and only that is read.
    let mut buffer: Vec<u8> = Vec::with_capacity(32 * 1024);
    // SAFETY: u8 has no invalid values, and no byte past what the kernel wrote is read.
    unsafe { buffer.set_len(buffer.capacity()) };
    let mut read = Vec::new();
    let mut entries: Vec<(std::ops::Range<usize>, u8)> = Vec::new();
    loop {
        // SAFETY: the buffer is writable for its length; getdents64 writes whole records.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, fd.0, buffer.as_mut_ptr(), buffer.len()) };
        if n < 0 {
            return Err(errno());
        }
        if n == 0 {
            break;
        }
        let mut at = 0usize;
        while at < n as usize {
            // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, then the name.
            let reclen = u16::from_ne_bytes([buffer[at + 16], buffer[at + 17]]) as usize;
            let kind = buffer[at + 18];
            let name = &buffer[at + 19..at + reclen];
            let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
            at += reclen;
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match kind {
                libc::DT_REG => FILE,
                libc::DT_DIR => DIR,
                libc::DT_LNK => SYMLINK,
                libc::DT_UNKNOWN => kind_at(&fd, name),
                _ => OTHER,
            };
            entries.push((read.len()..read.len() + name.len(), kind));
            read.extend_from_slice(name);
        }
    }
    // In byte order, as Node's scandir gives them: the walk's own sort (UTF-16 code units) then
    // has next to nothing to do.
    entries.sort_unstable_by(|a, b| read[a.0.clone()].cmp(&read[b.0.clone()]));
    dir.names.reserve(read.len() + entries.len());
    for (range, kind) in entries {
        dir.names.extend_from_slice(&read[range]);
        dir.names.push(b'/');
        dir.kinds.push(kind);
    }
    Ok(dir)
}

/// An entry's kind by `fstatat`, for a file system that gives none in `d_type` (as Node asks
/// `lstat` then); OTHER when it is gone.
fn kind_at(fd: &Fd, name: &[u8]) -> u8 {
    let Ok(c) = CString::new(name) else { return OTHER };
    // SAFETY: a zeroed stat is a valid out parameter; a valid C string and open directory.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(fd.0, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return OTHER;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => FILE,
        libc::S_IFDIR => DIR,
        libc::S_IFLNK => SYMLINK,
        _ => OTHER,
    }
}
