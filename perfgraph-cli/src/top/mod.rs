//! `perfgraph top <pid>`: a live terminal UI on a running instrumented process, refreshed every
//! `--interval` seconds from its control socket (`status`, then `dump` read back as a report). The rows
//! are a pure function of the last snapshot and the keys pressed ([`view`]); [`draw`] puts them on the
//! screen. When the process exits, the screen says so and keeps its last snapshot until `q`.

mod draw;
mod figures;
mod fit;
#[cfg(test)]
mod golden;
mod input;
mod model;
mod view;
mod waits;

use std::io;
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use perfgraph_core::attach;
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::failure::Failure;
use input::{Input, Wake};
use view::{Pane, Snapshot, ThreadNow, Ui, WaitNow};

#[derive(Args, Debug)]
pub struct TopArgs {
    /// The process id.
    pub pid: u32,
    /// Seconds between refreshes (at least 0.1).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub interval: f64,
}

/// Shortest refresh interval, seconds.
pub const MIN_INTERVAL: f64 = 0.1;

/// How the UI ended.
#[derive(Debug, PartialEq)]
enum End {
    /// `q`, Esc or Ctrl-C.
    Quit,
    /// SIGTERM, SIGHUP or SIGINT.
    Signal(i32),
    /// The terminal is gone.
    HangUp,
}

/// Runs the UI until `q`, a signal that ends it or a terminal that hangs up. The process is asked once
/// before the terminal is taken: one that does not answer is one line and exit 2, as for the other
/// subcommands.
pub fn run(pid: u32, interval: f64) -> Result<u8, Failure> {
    let interval = Duration::from_secs_f64(interval.max(MIN_INTERVAL));
    let first = fetch(pid).map_err(|e| Failure(e.to_string()))?;
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut input = Input::new().map_err(|e| Failure(format!("terminal: {e}")))?;
    let snapshots = fetcher(
        pid,
        interval,
        input.waker().map_err(|e| Failure(e.to_string()))?,
    );
    // Raw mode and the alternate screen, given back on every way out but a terminal that is gone (a
    // panic too: `init`'s hook).
    let mut terminal = ratatui::init();
    let end = match run_loop(&mut terminal, &mut input, &snapshots, pid, first, colour) {
        Err(e) if input::hung_up(&e) => Ok(End::HangUp),
        end => end,
    };
    if matches!(end, Ok(End::Quit) | Err(_)) {
        ratatui::restore();
    } else {
        // After a signal, the terminal may be gone (SIGHUP) and take no word of a failure.
        let _ = ratatui::try_restore();
    }
    let sig = match end {
        Ok(End::Quit) => return Ok(0),
        Ok(End::Signal(sig)) => sig,
        // As SIGHUP would: the terminal that hung up sends it to the session's leader only.
        Ok(End::HangUp) => libc::SIGHUP,
        Err(e) => return Err(Failure(format!("terminal: {e}"))),
    };
    // Ends as the signal would have ended it: the exit status says so (a shell shows 128 + the signal).
    let _ = signal_hook::low_level::emulate_default_handler(sig);
    Ok(128 + sig as u8)
}

/// The process's status and report now.
fn fetch(pid: u32) -> io::Result<Snapshot> {
    let status = attach::status(pid)?;
    let report = attach::report(pid)?;
    Ok(Snapshot {
        pid: status.pid,
        program: status.program.clone(),
        wall_ns: status.wall_ns,
        rss_bytes: status.rss_bytes,
        heap_bytes: status.heap_bytes,
        threads: status
            .threads
            .iter()
            .map(|t| ThreadNow {
                index: t.index,
                name: t.name.clone(),
                alive_ns: t.alive_ns,
                cpu_ns: t.cpu_ns,
                running: t
                    .running
                    .iter()
                    .map(|r| (r.name.clone(), r.elapsed_ns))
                    .collect(),
                waiting: t.waiting.as_ref().map(|w| WaitNow {
                    on: w.on.clone(),
                    holder: w.holder,
                    ns: w.elapsed_ns,
                }),
            })
            .collect(),
        report,
    })
}

/// Whether `e`, from asking the process, says it no longer exists.
fn gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
    ) || e.to_string().contains("no answer")
}

/// A thread that asks the process every `interval` and hands each answer over, waking the UI; it ends
/// with the process (or with `top`). The UI waits for keys and signals while the process answers, which
/// may take long (a stopped process: 30 s).
fn fetcher(
    pid: u32,
    interval: Duration,
    waker: input::Waker,
) -> mpsc::Receiver<io::Result<Snapshot>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(interval);
            let answer = fetch(pid);
            let last = answer.as_ref().is_err_and(gone);
            if tx.send(answer).is_err() {
                return;
            }
            waker.wake();
            if last {
                return;
            }
        }
    });
    rx
}

fn run_loop(
    terminal: &mut DefaultTerminal,
    input: &mut Input,
    snapshots: &mpsc::Receiver<io::Result<Snapshot>>,
    pid: u32,
    first: Snapshot,
    colour: bool,
) -> io::Result<End> {
    let mut snapshot = first;
    let mut ui = Ui::default();
    let mut note: Option<String> = None;
    loop {
        while let Ok(answer) = snapshots.try_recv() {
            match answer {
                Ok(s) => {
                    snapshot = s;
                    note = None;
                }
                Err(e) => {
                    note = Some(if gone(&e) {
                        format!("process {pid} exited; showing its last snapshot")
                    } else {
                        e.to_string()
                    });
                }
            }
        }
        terminal.draw(|f| {
            draw::draw(
                f,
                &draw::Screen {
                    snapshot: Some(&snapshot),
                    ui: &ui,
                    note: note.as_deref(),
                    colour,
                },
            );
        })?;
        match input.wait()? {
            Wake::Keys(keys) => {
                for key in keys {
                    if key.kind == KeyEventKind::Press && !on_key(&mut ui, key) {
                        return Ok(End::Quit);
                    }
                }
            }
            Wake::Signal(sig) => return Ok(End::Signal(sig)),
            Wake::HangUp => return Ok(End::HangUp),
            Wake::Redraw => {}
        }
    }
}

/// Applies a key to the UI's state; `false` to quit.
fn on_key(ui: &mut Ui, key: KeyEvent) -> bool {
    if let Some(typing) = &mut ui.typing {
        match key.code {
            KeyCode::Enter => {
                ui.filter = std::mem::take(typing);
                ui.typing = None;
            }
            KeyCode::Esc => {
                ui.typing = None;
                ui.filter.clear();
            }
            KeyCode::Backspace => {
                typing.pop();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => typing.push(c),
            KeyCode::Char('c') => return false,
            _ => {}
        }
        return true;
    }
    let at = Pane::ALL.iter().position(|&p| p == ui.pane).unwrap_or(0);
    match key.code {
        KeyCode::Char('q') | KeyCode::Esc => return false,
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return false,
        KeyCode::Tab => ui.pane = Pane::ALL[(at + 1) % Pane::ALL.len()],
        KeyCode::BackTab => ui.pane = Pane::ALL[(at + Pane::ALL.len() - 1) % Pane::ALL.len()],
        KeyCode::Char(c @ '1'..='7') => ui.pane = Pane::ALL[(c as u8 - b'1') as usize],
        KeyCode::Char('s') => ui.sort = ui.sort.next(),
        KeyCode::Char('n') => ui.top_n = !ui.top_n,
        KeyCode::Char('/') => ui.typing = Some(ui.filter.clone()),
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_switch_panes_sort_filter_and_quit() {
        let mut ui = Ui::default();
        assert!(on_key(&mut ui, key(KeyCode::Tab)));
        assert_eq!(ui.pane, Pane::Graph);
        assert!(on_key(&mut ui, key(KeyCode::BackTab)));
        assert!(on_key(&mut ui, key(KeyCode::BackTab)));
        assert_eq!(ui.pane, Pane::Waits);
        assert!(on_key(&mut ui, key(KeyCode::Char('3'))));
        assert_eq!(ui.pane, Pane::Sections);
        // The locks and counters panes: keys 5 and 6, and Tab goes round through them.
        assert!(on_key(&mut ui, key(KeyCode::Char('5'))));
        assert_eq!(ui.pane, Pane::Locks);
        assert!(on_key(&mut ui, key(KeyCode::Char('6'))));
        assert_eq!(ui.pane, Pane::Counters);
        // The wait chains: key 7, the last; Tab goes round.
        assert!(on_key(&mut ui, key(KeyCode::Char('7'))));
        assert_eq!(ui.pane, Pane::Waits);
        assert!(on_key(&mut ui, key(KeyCode::Tab)));
        assert_eq!(ui.pane, Pane::Running);
        assert!(on_key(&mut ui, key(KeyCode::BackTab)));
        assert_eq!(ui.pane, Pane::Waits);
        assert!(on_key(&mut ui, key(KeyCode::Char('3'))));
        assert!(on_key(&mut ui, key(KeyCode::Char('s'))));
        assert_eq!(ui.sort, view::Sort::SelfTime);
        assert!(on_key(&mut ui, key(KeyCode::Char('n'))));
        assert!(ui.top_n);
        for code in [
            KeyCode::Char('/'),
            KeyCode::Char('r'),
            KeyCode::Char('x'),
            KeyCode::Backspace,
            KeyCode::Char('e'),
        ] {
            assert!(on_key(&mut ui, key(code)));
        }
        assert_eq!(ui.typing.as_deref(), Some("re"));
        // `q` while typing is a letter of the filter.
        assert!(on_key(&mut ui, key(KeyCode::Char('q'))));
        assert!(on_key(&mut ui, key(KeyCode::Enter)));
        assert_eq!((ui.filter.as_str(), ui.typing.is_none()), ("req", true));
        assert!(!on_key(&mut ui, key(KeyCode::Char('q'))));
        assert!(!on_key(
            &mut Ui::default(),
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
        ));
    }
}
