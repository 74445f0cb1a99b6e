//! A made-up simulation instrumented with perfgraph: set-up, a mesh refinement that grabs memory, time steps
//! whose nonlinear solves take a few seconds each (with many small timed steps inside), and a worker thread
//! writing checkpoints. Run it and watch stderr:
//!
//! ```text
//! cargo run --release -p perfgraph-demo
//! PERFGRAPH_REPORT=all cargo run --release -p perfgraph-demo
//! ```
//!
//! Benchmark modes (used by `benches/`): `--fine-iters N`, `--fine-secs S` (only the fine-grained loop),
//! `--idle-secs S` (one timed section that sleeps), `--flood-mb N` (write N MB to stdout in one timed
//! section: 64 KiB `write_all`s, or `println!` of 100-byte lines with `--lines`; what the capture of the
//! program's output costs, docs/live-print.md), and `--cpu` (print the perfgraph thread's CPU time at the
//! end, on stdout).

use std::hint::black_box;
use std::time::{Duration, Instant};

use perfgraph_core::{time_section, timed};

mod fine;
mod stats;

/// The simulation's state: a 1-D field relaxed by Jacobi sweeps.
struct Simulation {
    field: Vec<f64>,
    scratch: Vec<f64>,
    mesh: Vec<u64>,
}

impl Simulation {
    #[timed(level = 0, live = "Setting up the problem")]
    fn setup(cells: usize) -> Simulation {
        let field = (0..cells).map(|i| (i as f64 * 0.01).sin()).collect();
        Simulation {
            field,
            scratch: vec![0.0; cells],
            mesh: Vec::new(),
        }
    }

    /// Quick, but grows memory past `PERFGRAPH_MEM_LIMIT` (100 MB): printed even though it takes < 1 s.
    #[timed(name = "mesh::refine", level = 1, live = "Refining the mesh")]
    fn refine_mesh(&mut self) {
        let cells = 20_000_000; // 160 MB of connectivity, touched so it is resident
        self.mesh = (0..cells as u64)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
    }

    #[timed(level = 0, live = "Time stepping")]
    fn time_steps(&mut self, steps: usize, solve_time: Duration) {
        for step in 0..steps {
            self.time_step(step, solve_time);
        }
    }

    #[timed(level = 1, args(step))]
    fn time_step(&mut self, step: usize, solve_time: Duration) {
        let norm = self.solve(solve_time);
        // The program's own output, through perfgraph so it never splits a live line.
        perfgraph_core::suspend(|| eprintln!("Time step {step}: residual norm {norm:.3e}"));
        if step % 2 == 1 {
            self.output_step();
        }
    }

    /// Newton-like iterations until "converged" (here: until `budget` has passed), each made of many small
    /// timed kernels.
    #[timed(live = "Solving nonlinear system", dots)]
    fn solve(&mut self, budget: Duration) -> f64 {
        let start = Instant::now();
        let mut norm = 0.0;
        while start.elapsed() < budget {
            self.jacobian();
            norm = self.residual();
            perfgraph_core::counter!("residual norm", norm);
        }
        norm
    }

    #[timed(level = 2)]
    fn residual(&mut self) -> f64 {
        let n = self.field.len();
        let mut norm = 0.0;
        for i in 1..n - 1 {
            let r = self.field[i - 1] - 2.0 * self.field[i] + self.field[i + 1];
            self.scratch[i] = self.field[i] + 0.25 * r;
            norm += r * r;
        }
        std::mem::swap(&mut self.field, &mut self.scratch);
        norm.sqrt()
    }

    #[timed(level = 2)]
    fn jacobian(&mut self) {
        for chunk in self.field.chunks(4096) {
            time_section!("jacobian::block", level = 3);
            black_box(chunk.iter().sum::<f64>());
        }
    }

    #[timed(level = 1, live = "Writing output")]
    fn output_step(&self) {
        std::thread::sleep(Duration::from_millis(300));
        black_box(self.field.iter().fold(0.0, |a, b| a + b));
    }
}

/// The worker thread: writes checkpoints while the main thread solves.
#[timed(live = "Writing checkpoint", args(id))]
fn write_checkpoint(id: usize) {
    for _ in 0..12 {
        time_section!("checkpoint::compress", level = 2);
        std::thread::sleep(Duration::from_millis(100));
    }
    black_box(id);
    perfgraph_core::event!("checkpoint written", args(id, bytes = 12 * 4096));
}

#[timed(level = 0, name = "demo")]
fn run_show() {
    let mut sim = Simulation::setup(200_000);
    sim.refine_mesh();
    let worker = std::thread::Builder::new()
        .name("checkpointer".into())
        .spawn(|| {
            std::thread::sleep(Duration::from_millis(1500));
            write_checkpoint(1);
        })
        .expect("spawn the checkpoint thread");
    sim.time_steps(3, Duration::from_millis(3300));
    worker.join().expect("checkpoint thread");
    black_box(sim.mesh.len());
}

/// Writes `mb` MB to stdout: 64 KiB `write_all`s, or (`lines`) `println!` of 100-byte lines. Then says how
/// long it took, on stderr.
#[timed(live = "Flooding stdout")]
fn flood(mb: u64, lines: bool) {
    use std::io::Write;
    let start = Instant::now();
    let total = mb * 1_000_000;
    let mut out = std::io::stdout().lock();
    if lines {
        let line = "y".repeat(99);
        for _ in 0..total / 100 {
            writeln!(out, "{line}").expect("stdout");
        }
    } else {
        let block = [b'y'; 65536];
        let mut left = total;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            out.write_all(&block[..n]).expect("stdout");
            left -= n as u64;
        }
    }
    out.flush().expect("stdout");
    drop(out);
    perfgraph_core::suspend(|| {
        eprintln!("flood: {mb} MB in {:.3} s", start.elapsed().as_secs_f64())
    });
}

fn main() {
    let args = Args::parse();
    if let Some(n) = args.fine_iters {
        let (iters, took) = fine::run_iterations(n);
        println!(
            "fine loop: {iters} iterations in {:.3} ms",
            took.as_secs_f64() * 1e3
        );
    } else if let Some(secs) = args.fine_secs {
        let (iters, took) = fine::run_for(Duration::from_secs_f64(secs));
        println!(
            "fine loop: {iters} iterations in {:.3} ms",
            took.as_secs_f64() * 1e3
        );
    } else if let Some(secs) = args.idle_secs {
        fine::idle(Duration::from_secs_f64(secs));
    } else if let Some(mb) = args.flood_mb {
        flood(mb, args.lines);
    } else {
        run_show();
    }
    if args.cpu {
        match stats::perfgraph_thread_cpu() {
            Some(cpu) => println!("perfgraph thread cpu: {:.3} ms", cpu.as_secs_f64() * 1e3),
            None => println!("perfgraph thread cpu: unavailable"),
        }
    }
}

/// Command-line options (all optional; without any, the demo runs its show).
#[derive(Default)]
struct Args {
    fine_iters: Option<u64>,
    fine_secs: Option<f64>,
    idle_secs: Option<f64>,
    flood_mb: Option<u64>,
    lines: bool,
    cpu: bool,
}

impl Args {
    fn parse() -> Args {
        let mut args = Args::default();
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            let mut value = |name: &str| -> String {
                it.next()
                    .unwrap_or_else(|| usage(&format!("{name} needs a value")))
            };
            match arg.as_str() {
                "--fine-iters" => args.fine_iters = Some(number(&value("--fine-iters"))),
                "--fine-secs" => args.fine_secs = Some(number(&value("--fine-secs"))),
                "--idle-secs" => args.idle_secs = Some(number(&value("--idle-secs"))),
                "--flood-mb" => args.flood_mb = Some(number(&value("--flood-mb"))),
                "--lines" => args.lines = true,
                "--cpu" => args.cpu = true,
                "-h" | "--help" => usage(""),
                other => usage(&format!("unknown argument {other:?}")),
            }
        }
        args
    }
}

fn number<T: std::str::FromStr>(s: &str) -> T {
    s.parse()
        .unwrap_or_else(|_| usage(&format!("{s:?} is not a valid number")))
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("perfgraph-demo: {problem}");
    }
    eprintln!(
        "usage: perfgraph-demo [--fine-iters N | --fine-secs S | --idle-secs S | --flood-mb N [--lines]] [--cpu]\n\
         Without options it runs the show (about 12 s). Settings: PERFGRAPH_* variables, see docs/user-guide.md."
    );
    std::process::exit(if problem.is_empty() { 0 } else { 2 })
}
