//! A fake process for the tests of the control socket's client (`tests/attach_hostile.rs`): it listens at
//! the socket path it is given, as a squatter of another user's socket directory would, or as a process
//! gone wrong, and answers every request in one hostile way:
//!
//! * `escape`: a status whose program, thread and section names hold terminal commands;
//! * `threads`: a status that lists threads without end;
//! * `endless`: `ok`, then spaces without end;
//! * `drip`: `ok`, then a space every 100 ms, without end;
//! * `silent`: nothing (a stopped process).
//!
//! `hostile_server <directory> <mode>`: it listens at `<directory>/<its pid>.sock`, says `listening` on
//! stdout once it does, and runs until killed.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(mode)) = (args.next(), args.next()) else {
        eprintln!("usage: hostile_server <directory> <escape|threads|endless|drip|silent>");
        std::process::exit(2);
    };
    let path = std::path::Path::new(&dir).join(format!("{}.sock", std::process::id()));
    let listener = UnixListener::bind(&path).expect("bind");
    // Anyone may connect: the victim runs as another user.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    println!("listening");
    std::io::stdout().flush().unwrap();
    for stream in listener.incoming().flatten() {
        let mode = mode.clone();
        std::thread::spawn(move || answer(stream, &mode));
    }
}

fn answer(mut stream: UnixStream, mode: &str) {
    let mut request = [0u8; 256];
    let _ = stream.read(&mut request);
    let pid = std::process::id();
    let _ = match mode {
        "escape" => stream.write_all(
            format!(
                "ok\n{{\"format\": \"perfgraph-status\", \"version\": 1, \"pid\": {pid}, \
                 \"program\": \"\\u001b]2;PWNED\\u0007evil\", \"start_unix_ns\": 0, \"sections\": 1, \
                 \"threads\": [{{\"index\": 0, \"name\": \"\\u001b[31mred\", \"main\": true, \
                 \"running\": [{{\"name\": \"\\r\\u001b[2Kwipe\", \"depth\": 0}}]}}]}}\n"
            )
            .as_bytes(),
        ),
        "threads" => stream
            .write_all(
                format!("ok\n{{\"format\": \"perfgraph-status\", \"pid\": {pid}, \"threads\": [")
                    .as_bytes(),
            )
            .and_then(|()| {
                let thread = b"{\"index\": 0, \"name\": \"t\", \"running\": [{}]},".repeat(1000);
                loop {
                    stream.write_all(&thread)?;
                }
            }),
        "endless" => stream.write_all(b"ok\n").and_then(|()| {
            let spaces = [b' '; 65536];
            loop {
                stream.write_all(&spaces)?;
            }
        }),
        "drip" => stream.write_all(b"ok\n").and_then(|()| {
            loop {
                stream.write_all(b" ")?;
                std::thread::sleep(Duration::from_millis(100));
            }
        }),
        _ => {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(())
        }
    };
}
