//! stdout, written one way by every command: a reader that left (`ladder plan … | head -1`,
//! `ladder diff … | head -1`) ends the output, not the command. Rust's `println!` panics when
//! stdout is a closed pipe (EPIPE; Rust ignores SIGPIPE), and a write error that reaches
//! `main` would print an error and lose the exit code the command decided (a regression found
//! by `run --against … | head -1` must still exit 3). So nothing in `app` writes to
//! `std::io::stdout()` or uses `print!`/`println!`: it writes through [`Stdout`] (or the `out!`
//! and `outln!` macros), which treats the first broken
//! pipe as the end of stdout and drops everything written after it, silently, while the command
//! goes on to its exit code. Any other write error (a full disk behind `> file`) is returned.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout's reader has gone: every later write is dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// The process's stdout, ended quietly by a closed pipe (see the module's doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stdout;

/// The process's stdout, as every command writes it.
pub fn stdout() -> Stdout {
    Stdout
}

/// Whether stdout is a terminal (colours).
pub fn is_terminal() -> bool {
    io::IsTerminal::is_terminal(&io::stdout())
}

/// Whether a reader closed stdout during this process (later output was dropped).
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// A write's result with a broken pipe read as "written": the reader has gone, and that ends
/// the output, not the command.
fn absorb<T>(result: io::Result<T>, written: T) -> io::Result<T> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(written)
        }
        other => other,
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if closed() {
            return Ok(buf.len());
        }
        absorb(io::stdout().write(buf), buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if closed() {
            return Ok(());
        }
        absorb(io::stdout().lock().write_all(buf), ())
    }

    fn flush(&mut self) -> io::Result<()> {
        if closed() {
            return Ok(());
        }
        absorb(io::stdout().flush(), ())
    }
}

/// Writes `args` to stdout and flushes it, by the rule above; what `out!` and `outln!` call.
pub fn print(args: std::fmt::Arguments) -> io::Result<()> {
    let mut out = Stdout;
    out.write_fmt(args)?;
    out.flush()
}

/// `print!` for commands: to stdout through [`Stdout`], a closed pipe ending the output
/// quietly. Returns `io::Result<()>` (any other write error). In scope in every module of `app`
/// (`#[macro_use] mod pipe;` comes first there).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::app::pipe::print(format_args!($($arg)*))
    };
}

/// `println!` for commands: see `out!`.
macro_rules! outln {
    () => {
        $crate::app::pipe::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::app::pipe::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_written_and_closes_stdout_other_errors_are_not() {
        let broken = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(absorb(Err(broken), 7).unwrap(), 7);
        assert!(closed());
        let full = io::Error::from(io::ErrorKind::StorageFull);
        assert_eq!(
            absorb::<usize>(Err(full), 7).unwrap_err().kind(),
            io::ErrorKind::StorageFull
        );
        // Once closed, writes are dropped without touching the real stdout.
        assert_eq!(Stdout.write(b"dropped").unwrap(), 7);
        CLOSED.store(false, Ordering::Relaxed);
    }
}
