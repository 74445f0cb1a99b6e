//! `perfgraph top <pid>`: a live terminal UI on a running instrumented process, refreshed every
//! `--interval` seconds from its control socket (`status`, then `dump` read back as a report). The rows
//! are a pure function of the last snapshot and the keys pressed ([`view`]); [`draw`] puts them on the
//! screen. When the process exits, the screen says so and keeps its last snapshot until `q`.

mod draw;
mod view;

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use perfgraph_core::attach;
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::Failure;
use view::{Pane, Snapshot, ThreadNow, Ui};

/// Shortest refresh interval, seconds.
pub const MIN_INTERVAL: f64 = 0.1;

/// The signal that asked `top` to end (SIGTERM, SIGHUP, SIGINT), 0 for none: set by signal-hook's handler,
/// read by the loop, which gives the terminal back before the signal's default action ends the process.
static SIGNALLED: AtomicUsize = AtomicUsize::new(0);

/// Longest the loop waits for a key before it looks at [`SIGNALLED`].
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Runs the UI until `q`. The process is asked once before the terminal is taken: one that does not
/// answer is one line and exit 2, as for the other subcommands.
pub fn run(pid: u32, interval: f64) -> Result<u8, Failure> {
    let interval = Duration::from_secs_f64(interval.max(MIN_INTERVAL));
    let first = fetch(pid).map_err(|e| Failure(e.to_string()))?;
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let _ = signal_hook::flag::register_usize(sig, &SIGNALLED, sig as usize);
    }
    // Raw mode and the alternate screen, restored on every way out (a panic too: `init`'s hook; a
    // signal: the loop sees it and returns).
    let mut terminal = ratatui::init();
    let result = run_loop(&mut terminal, pid, interval, first, colour);
    ratatui::restore();
    let sig = SIGNALLED.load(Ordering::SeqCst);
    if sig != 0 {
        // Ends as the signal would have ended it (the exit status says so), the terminal given back.
        let _ = signal_hook::low_level::emulate_default_handler(sig as i32);
    }
    result
        .map(|()| 0)
        .map_err(|e| Failure(format!("terminal: {e}")))
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
                name: t.name.clone(),
                alive_ns: t.alive_ns,
                cpu_ns: t.cpu_ns,
                running: t
                    .running
                    .iter()
                    .map(|r| (r.name.clone(), r.elapsed_ns))
                    .collect(),
            })
            .collect(),
        report,
    })
}

fn run_loop(
    terminal: &mut DefaultTerminal,
    pid: u32,
    interval: Duration,
    first: Snapshot,
    colour: bool,
) -> io::Result<()> {
    let mut snapshot = first;
    let mut ui = Ui::default();
    let mut note: Option<String> = None;
    let mut gone = false;
    let mut next = Instant::now() + interval;
    loop {
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
        let wait = next
            .saturating_duration_since(Instant::now())
            .min(SIGNAL_CHECK);
        if SIGNALLED.load(Ordering::SeqCst) != 0 {
            return Ok(());
        }
        if event::poll(wait)?
            && let Event::Key(key) = event::read()?
            && key.kind == KeyEventKind::Press
            && !on_key(&mut ui, key)
        {
            return Ok(());
        }
        if Instant::now() >= next {
            next = Instant::now() + interval;
            if !gone {
                match fetch(pid) {
                    Ok(s) => {
                        snapshot = s;
                        note = None;
                    }
                    Err(e) => {
                        gone = matches!(
                            e.kind(),
                            io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
                        ) || e.to_string().contains("no answer");
                        note = Some(if gone {
                            format!("process {pid} exited; the last snapshot stays (q quits)")
                        } else {
                            e.to_string()
                        });
                    }
                }
            }
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
        KeyCode::Char(c @ '1'..='4') => ui.pane = Pane::ALL[(c as u8 - b'1') as usize],
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
        assert_eq!(ui.pane, Pane::Threads);
        assert!(on_key(&mut ui, key(KeyCode::Char('3'))));
        assert_eq!(ui.pane, Pane::Sections);
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
