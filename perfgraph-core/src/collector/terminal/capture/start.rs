//! The capture's start (descriptors, the child, the program's fds 1 and 2 taken over) and the forwarder
//! thread.

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;

use super::pump::{Stream, drain_signal};
use super::{
    ACTIVE, BIG_CHUNK, CHUNK, HOLD_POLL, LOOK, PARTIAL_DELAY, Pumped, Wait, child, decide, stream,
};
use crate::base::config::CaptureMode;
use crate::base::process;
use crate::base::sys::{self, Kind, Want};
use crate::collector::terminal::{self, Screen};

/// Starts capturing, if `mode` and where fds 1 and 2 lead now ask for it (live print's first line, the
/// terminal held). Returns a warning when `PERFGRAPH_CAPTURE=on` could not capture.
pub(super) fn start_now(screen: &mut Screen, mode: CaptureMode) -> Option<String> {
    let stdout = decide(mode, sys::target(1), sys::target(2))?;
    match start_locked(screen, stdout) {
        Ok(()) => None,
        Err(err) => (mode == CaptureMode::On).then(|| {
            format!(
                "perfgraph: warning: PERFGRAPH_CAPTURE=on: the program's output cannot be captured ({err}); \
                 it goes straight through"
            )
        }),
    }
}

/// Descriptors opened so far, closed if the start fails half-way.
struct Opened(Vec<RawFd>);

impl Opened {
    fn add(&mut self, fd: RawFd) -> RawFd {
        self.0.push(fd);
        fd
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        for &fd in &self.0 {
            sys::close_fd(fd);
        }
    }
}

/// The program's stream and what the child needs: `(stream read end, write end for the program, child's
/// descriptors)`. For a terminal the program writes to a pseudo-terminal's slave and the child feeds the
/// stream from its master.
fn open_stream(opened: &mut Opened, dest: RawFd, terminal: bool) -> std::io::Result<child::Fds> {
    let (read, feed) = sys::pipe_cloexec()?;
    opened.add(read);
    opened.add(feed);
    if !sys::make_nonblocking(read) {
        return Err(std::io::Error::last_os_error());
    }
    let (life_read, life_write) = sys::pipe_cloexec()?;
    opened.add(life_read);
    opened.add(life_write);
    let (caught_up_read, caught_up_write) = sys::pipe_cloexec()?;
    opened.add(caught_up_read);
    opened.add(caught_up_write);
    let mut fds = child::Fds {
        stream: read,
        feed,
        master: -1,
        slave: feed,
        dest,
        lifeline: (life_read, life_write),
        caught_up: (caught_up_read, caught_up_write),
        limit: sys::open_files_limit(),
    };
    if terminal {
        let (master, slave) = sys::open_pty()?;
        opened.add(master);
        opened.add(slave);
        sys::copy_terminal(dest, slave);
        fds.master = master;
        fds.slave = slave;
    }
    Ok(fds)
}

fn start_locked(screen: &mut Screen, stdout: bool) -> std::io::Result<()> {
    screen.flush(terminal::EXIT_FLUSH);
    // The forwarder thread first, before anything is changed: it waits for the terminal's lock (held here)
    // and finds the stream once the start is done, or none if it failed. Started after the program's
    // descriptors were taken over, a failed start would have to give them back, and `pthread_create` fails
    // (EAGAIN) while another thread is in `exec`: the descriptors given back then raced the `exec`, and the
    // new program's stdout could bypass the capture while its stderr did not.
    std::thread::Builder::new()
        .name("perfgraph-capture".into())
        .stack_size(256 * 1024)
        .spawn(forwarder)?;
    let mut opened = Opened(Vec::new());
    let dest = opened.add(sys::dup_cloexec(2)?);
    let dest_kind = sys::target(dest).map(|t| t.kind);
    let terminal = dest_kind == Some(Kind::Terminal);
    let fds = open_stream(&mut opened, dest, terminal)?;
    let (peek_read, peek_write) = sys::pipe_cloexec()?;
    opened.add(peek_read);
    opened.add(peek_write);
    let tail = sys::shared_word()?;
    let feeding = sys::shared_word()?;
    let shared = child::Shared { tail, feeding };
    // SAFETY: `child::run` makes only async-signal-safe calls on fixed buffers and ends with `_exit`.
    unsafe { sys::fork_detached((fds, shared), child::run)? };
    // The program's descriptors now lead into the stream (or the pseudo-terminal).
    if stdout {
        sys::dup_onto(fds.slave, 1)?;
    }
    if let Err(err) = sys::dup_onto(fds.slave, 2) {
        if stdout {
            let _ = sys::dup_onto(dest, 1);
        }
        return Err(err);
    }
    // Ours from now on: the destination, the stream's read end, the master, the look pipe, the lifeline's
    // write end (the child's wait ends when it closes: at the hand-over, or with the process) and the
    // caught-up pipe's read end (which ends when the child has forwarded everything after the hand-over),
    // all close-on-exec. The write ends are fds 1 and 2 (and, for a terminal, the child's).
    opened.0.clear();
    sys::close_fd(fds.slave);
    if terminal {
        sys::close_fd(fds.feed);
    }
    sys::close_fd(fds.lifeline.0);
    sys::close_fd(fds.caught_up.1);
    let inherited = [
        fds.lifeline.1,
        fds.caught_up.0,
        fds.stream,
        peek_read,
        peek_write,
        fds.master,
    ];
    for (slot, fd) in super::INHERITED.iter().zip(inherited) {
        // Relaxed: see `INHERITED`.
        slot.store(fd, Ordering::Relaxed);
    }
    let master = (fds.master >= 0).then_some(fds.master);
    let winch = master.and_then(|m| watch_window(dest, m));
    let cont = master.and_then(|_| watch_signal(signal_hook::consts::SIGCONT));
    process::set_output_tail(tail);
    *stream() = Some(Stream {
        read: fds.stream,
        peek: (peek_read, peek_write),
        master,
        dest,
        chunk: match dest_kind {
            Some(Kind::File | Kind::Pipe) => BIG_CHUNK,
            _ => CHUNK,
        },
        splice: true,
        stdout,
        look: Vec::with_capacity(LOOK),
        held: 0,
        held_since: None,
        done: false,
        suspended: 0,
        live_waiting: None,
        winch,
        cont,
        cont_waited: false,
        late_since: None,
        tail,
        lifeline: fds.lifeline.1,
        caught_up: fds.caught_up.0,
        feeding: terminal.then_some(feeding),
    });
    process::set_output_fd(dest);
    // Live print redraws the program's partial line below its own lines on a terminal; into a file, a line
    // the program left unfinished before is seen from the file's last byte.
    let open = !terminal && sys::ends_mid_line(dest);
    screen.capture_started(terminal, open);
    // Relaxed: read under the terminal's lock (held here) by whoever acts on it.
    ACTIVE.store(true, Ordering::Relaxed);
    Ok(())
}

/// Registers SIGWINCH (through signal-hook's self-pipe) so the forwarder copies the terminal's new window
/// size to the pseudo-terminal. `None` if it cannot: the size then stays as it was at the start.
fn watch_window(dest: RawFd, master: RawFd) -> Option<UnixStream> {
    let reader = watch_signal(signal_hook::consts::SIGWINCH)?;
    // A resize between the copy at the start and the registration is not lost.
    sys::copy_window_size(dest, master);
    Some(reader)
}

/// The read end of a self-pipe that signal-hook writes to when `signal` arrives (chained with any handler
/// the program has; a signal's default action, such as SIGCONT continuing the process, is unchanged).
fn watch_signal(signal: i32) -> Option<UnixStream> {
    let (reader, writer) = UnixStream::pair().ok()?;
    reader.set_nonblocking(true).ok()?;
    signal_hook::low_level::pipe::register(signal, writer).ok()?;
    Some(reader)
}

/// The forwarder thread: forwards the stream as it comes, until the capture ends. Should it ever fail, the
/// program gets its descriptors back rather than block on a stream nobody reads.
fn forwarder() {
    // Signals sent to the process go to the program's threads, as without perfgraph.
    sys::block_signals_here();
    let failed = std::panic::catch_unwind(forward_loop).is_err();
    let _screen = terminal::lock();
    if let Some(s) = stream().as_mut() {
        if failed {
            s.give_back();
        }
        // The capture is over: this process stops reading the stream, so once the child has stopped too
        // (the destination failed), a program's write blocked on the full stream fails with EPIPE as it
        // would have on the destination.
        s.close_reader();
    }
}

fn forward_loop() {
    loop {
        let (pumped, read, dest, master, signals) = {
            let mut screen = terminal::lock();
            let mut guard = stream();
            let Some(s) = guard.as_mut() else {
                return;
            };
            if s.done {
                return;
            }
            let pumped = s.pump(&mut screen, false, Wait::No);
            let fd = |p: &Option<UnixStream>| p.as_ref().map_or(-1, AsRawFd::as_raw_fd);
            (
                pumped,
                s.read,
                s.dest,
                s.master,
                [fd(&s.winch), fd(&s.cont)],
            )
        };
        let (first, wait_ms) = match pumped {
            Pumped::Done => return,
            Pumped::Cut => continue,
            Pumped::Empty => ((read, Want::Read), -1),
            // The held bytes keep the stream readable: look again shortly, or when the delay is up.
            Pumped::Held(since) => {
                let left = PARTIAL_DELAY.saturating_sub(since.elapsed()).min(HOLD_POLL);
                ((-1, Want::Read), left.as_millis() as i32 + 1)
            }
            Pumped::Blocked => ((dest, Want::Write), 100),
        };
        // A descriptor of -1 is never ready (poll skips it).
        let ready = sys::poll_fds(
            &[(signals[0], Want::Read), (signals[1], Want::Read), first],
            wait_ms,
        );
        if ready & 1 != 0
            && let Some(m) = master
        {
            // SIGWINCH came: empty the self-pipe, then copy the terminal's window size.
            drain_signal(signals[0]);
            sys::copy_window_size(dest, m);
        }
        if ready & 2 != 0 {
            // SIGCONT came: the job was stopped and continued, and the shell wrote its lines meanwhile. The
            // self-pipe is read under the terminal's lock, as live print reads it: the one that takes the
            // byte tells the screen before the other can write.
            let mut screen = terminal::lock();
            if drain_signal(signals[1]) {
                screen.resumed();
            }
        }
    }
}
