//! The cells of the tables: what each table of [`Report`] holds, as [`Grid`]s that the text tables
//! ([`Report::graph_table`] and the rest) and the HTML page ([`super::html`]) both render, so that the two
//! show the same figures formatted the same way.

use super::table::{Cell, Grid};
use super::{TABLE_DEPTH, average, megabytes, millis, seconds, shown};
use crate::base::process;
use crate::data::counters::format_value;
use crate::data::figures::CpuFigures;
use crate::data::report::Report;

impl Report {
    /// The cells of [`graph_table`](Report::graph_table).
    pub(crate) fn graph_grid(&self) -> Grid {
        let rows: Vec<usize> = (0..self.tree.nodes.len())
            .filter(|&i| self.tree.nodes[i].depth <= TABLE_DEPTH)
            .collect();
        self.tree_grid(&rows)
    }

    /// The cells of [`branch_table`](Report::branch_table).
    pub(crate) fn branch_grid(&self) -> Grid {
        let mut rows = self.heaviest_branch();
        rows.truncate(TABLE_DEPTH as usize + 1);
        self.tree_grid(&rows)
    }

    /// The cells of the graph's and the branch's tables, for the nodes `rows`.
    pub(crate) fn tree_grid(&self, rows: &[usize]) -> Grid {
        const HEADERS: [&str; 10] = [
            "Section", "Calls", "Self(s)", "Avg(s)", "%", "Mem(MB)", "Total(s)", "Avg(s)", "%",
            "Mem(MB)",
        ];
        let rows: Vec<Vec<Cell>> = rows
            .iter()
            .enumerate()
            .map(|(row, &i)| {
                process::progress_at(row);
                let n = &self.tree.nodes[i];
                vec![
                    Cell::Text(format!(
                        "{}{}",
                        "  ".repeat(n.depth as usize),
                        shown(n.name)
                    )),
                    Cell::Int(i128::from(n.calls)),
                    Cell::Fixed(seconds(n.self_ns), 3),
                    Cell::Fixed(average(n.self_ns, n.calls), 3),
                    Cell::Percent(self.percent(n.self_ns)),
                    Cell::Int(i128::from(megabytes(n.self_mem_bytes))),
                    Cell::Fixed(seconds(n.total_ns), 3),
                    Cell::Fixed(average(n.total_ns, n.calls), 3),
                    Cell::Percent(self.percent(n.total_ns)),
                    Cell::Int(i128::from(megabytes(n.total_mem_bytes))),
                ]
            })
            .collect();
        Grid::new(&HEADERS, rows)
    }

    /// The cells of [`sections_table`](Report::sections_table).
    pub(crate) fn sections_grid(&self, n: usize) -> Grid {
        let rows: Vec<Vec<Cell>> = self
            .heaviest_sections(n)
            .iter()
            .map(|s| {
                vec![
                    Cell::Text(shown(s.name)),
                    Cell::Int(i128::from(s.calls)),
                    Cell::Fixed(seconds(s.self_ns), 3),
                    Cell::Fixed(average(s.self_ns, s.calls), 3),
                    Cell::Percent(self.percent(s.self_ns)),
                    Cell::Int(i128::from(megabytes(s.self_mem_bytes))),
                ]
            })
            .collect();
        Grid::new(
            &["Section", "Calls", "Self(s)", "Avg.", "%", "Mem(MB)"],
            rows,
        )
    }

    /// The cells of [`latency_table`](Report::latency_table).
    pub(crate) fn latency_grid(&self, n: usize) -> Grid {
        let rows: Vec<Vec<Cell>> = self
            .heaviest_sections(n)
            .iter()
            .filter(|s| s.latency.count > 0)
            .map(|s| {
                let l = &s.latency;
                vec![
                    Cell::Text(shown(s.name)),
                    Cell::Int(i128::from(l.count)),
                    Cell::Fixed(millis(l.min_ns), 3),
                    Cell::Fixed(millis(l.percentile(50.0)), 3),
                    Cell::Fixed(millis(l.percentile(90.0)), 3),
                    Cell::Fixed(millis(l.percentile(99.0)), 3),
                    Cell::Fixed(millis(l.max_ns), 3),
                ]
            })
            .collect();
        Grid::new(
            &[
                "Section", "Calls", "Min(ms)", "p50(ms)", "p90(ms)", "p99(ms)", "Max(ms)",
            ],
            rows,
        )
    }

    /// The cells of [`processes_table`](Report::processes_table): none for one process's run.
    pub(crate) fn processes_grid(&self) -> Grid {
        let Some(merged) = &self.merged else {
            return Grid::new(&[], Vec::new());
        };
        let rows: Vec<Vec<Cell>> = (0..self.tree.nodes.len())
            .filter(|&i| self.tree.nodes[i].depth <= TABLE_DEPTH)
            .filter_map(|i| Some((&self.tree.nodes[i], merged.spread.get(i)?)))
            .map(|(n, s)| {
                vec![
                    Cell::Text(format!(
                        "{}{}",
                        "  ".repeat(n.depth as usize),
                        shown(n.name)
                    )),
                    Cell::Int(i128::from(s.processes)),
                    Cell::Fixed(seconds(s.min_ns), 3),
                    Cell::Fixed(seconds(s.avg_ns()), 3),
                    Cell::Fixed(seconds(s.max_ns), 3),
                    Cell::Int(i128::from(s.max_rank)),
                ]
            })
            .collect();
        Grid::new(
            &[
                "Section",
                "Processes",
                "Min(s)",
                "Avg(s)",
                "Max(s)",
                "Max rank",
            ],
            rows,
        )
    }

    /// The cells of [`threads_table`](Report::threads_table).
    pub(crate) fn threads_grid(&self) -> Grid {
        let rows: Vec<Vec<Cell>> = self
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| {
                process::progress_at(i);
                let of_alive = |ns: u64| match t.alive_ns {
                    0 => 0.0,
                    alive => 100.0 * ns as f64 / alive as f64,
                };
                vec![
                    Cell::Text(shown(&t.name)),
                    Cell::Fixed(seconds(t.alive_ns), 3),
                    Cell::Fixed(seconds(t.busy_ns), 3),
                    Cell::Percent(of_alive(t.busy_ns)),
                    Cell::Fixed(seconds(t.cpu_ns), 3),
                    Cell::Percent(of_alive(t.cpu_ns)),
                    Cell::Int(i128::from(t.calls)),
                ]
            })
            .collect();
        Grid::new(
            &[
                "Thread",
                "Alive(s)",
                "In sections(s)",
                "%",
                "CPU(s)",
                "CPU %",
                "Calls",
            ],
            rows,
        )
    }

    /// The cells of [`async_table`](Report::async_table).
    pub(crate) fn async_grid(&self) -> Grid {
        let rows: Vec<Vec<Cell>> = self
            .async_sections()
            .iter()
            .map(|s| {
                vec![
                    Cell::Text(shown(s.name)),
                    Cell::Int(i128::from(s.calls)),
                    Cell::Int(i128::from(s.polls)),
                    Cell::Fixed(seconds(s.busy_ns), 3),
                    Cell::Fixed(s.busy_ns as f64 / 1e6 / s.polls.max(1) as f64, 3),
                    Cell::Fixed(seconds(s.wall_ns), 3),
                    Cell::Fixed(seconds(s.max_wall_ns), 3),
                    Cell::Int(i128::from(s.cancelled)),
                ]
            })
            .collect();
        Grid::new(
            &[
                "Section",
                "Calls",
                "Polls",
                "Busy(s)",
                "Mean poll(ms)",
                "Wall(s)",
                "Max wall(s)",
                "Cancelled",
            ],
            rows,
        )
    }

    /// The cells of [`alloc_table`](Report::alloc_table).
    pub(crate) fn alloc_grid(&self) -> Grid {
        let mb = |bytes: u64| bytes as f64 / 1e6;
        let rows: Vec<Vec<Cell>> = self
            .alloc_sections()
            .iter()
            .map(|s| {
                vec![
                    Cell::Text(shown(s.name)),
                    Cell::Int(i128::from(s.calls)),
                    Cell::Int(i128::from(s.allocs)),
                    Cell::Fixed(mb(s.alloc_bytes), 3),
                    Cell::Int(i128::from(s.self_allocs)),
                    Cell::Fixed(mb(s.self_alloc_bytes), 3),
                    Cell::Fixed(mb(s.heap_peak_bytes), 3),
                ]
            })
            .collect();
        Grid::new(
            &[
                "Section",
                "Calls",
                "Allocs",
                "Alloc(MB)",
                "Self allocs",
                "Self alloc(MB)",
                "Peak(MB)",
            ],
            rows,
        )
    }

    /// The cells of [`cpu_table`](Report::cpu_table).
    pub(crate) fn cpu_grid(&self) -> Grid {
        let sections = self.cpu_sections();
        let extra: Vec<(usize, &str)> = (0..CpuFigures::COUNT)
            .filter_map(|k| CpuFigures::COLUMNS[k].map(|heading| (k, heading)))
            .filter(|&(k, _)| sections.iter().any(|s| s.cpu.values()[k] != 0))
            .collect();
        let rows: Vec<Vec<Cell>> = sections
            .iter()
            .map(|s| {
                let percent = match s.total_ns {
                    0 => 0.0,
                    total => 100.0 * s.cpu.cpu_ns as f64 / total as f64,
                };
                let values = s.cpu.values();
                let mut row = vec![
                    Cell::Text(shown(s.name)),
                    Cell::Int(i128::from(s.calls)),
                    Cell::Fixed(seconds(s.total_ns), 3),
                    Cell::Fixed(seconds(s.cpu.cpu_ns), 3),
                    Cell::Fixed(seconds(s.waiting_ns()), 3),
                    Cell::Percent(percent),
                ];
                row.extend(extra.iter().map(|&(k, _)| Cell::Int(i128::from(values[k]))));
                row
            })
            .collect();
        let mut headings = vec![
            "Section",
            "Calls",
            "Total(s)",
            "CPU(s)",
            "Waiting(s)",
            "CPU %",
        ];
        headings.extend(extra.iter().map(|&(_, heading)| heading));
        Grid::new(&headings, rows)
    }

    /// The cells of [`counters_table`](Report::counters_table).
    pub(crate) fn counters_grid(&self) -> Grid {
        let rows: Vec<Vec<Cell>> = self
            .run
            .counters
            .iter()
            .map(|c| {
                vec![
                    Cell::Text(shown(&c.name)),
                    Cell::Int(i128::from(c.samples)),
                    Cell::Number(format_value(c.last)),
                    Cell::Number(format_value(c.min)),
                    Cell::Number(format_value(c.max)),
                    Cell::Number(format_value(c.mean())),
                ]
            })
            .collect();
        Grid::new(&["Counter", "Samples", "Last", "Min", "Max", "Mean"], rows)
    }

    /// The cells of [`locks_table`](Report::locks_table).
    pub(crate) fn locks_grid(&self) -> Grid {
        let ms = |ns: u64| ns as f64 / 1e6;
        let rows: Vec<Vec<Cell>> = self
            .run
            .locks
            .iter()
            .map(|l| {
                vec![
                    Cell::Text(shown(&l.name)),
                    Cell::Int(i128::from(l.acquisitions)),
                    Cell::Int(i128::from(l.contended)),
                    Cell::Fixed(seconds(l.wait_ns), 3),
                    Cell::Fixed(ms(l.max_wait_ns), 3),
                    Cell::Fixed(seconds(l.hold_ns), 3),
                    Cell::Fixed(ms(l.max_hold_ns), 3),
                    Cell::Int(i128::from(l.max_waiters)),
                ]
            })
            .collect();
        Grid::new(
            &[
                "Lock",
                "Acquisitions",
                "Contended",
                "Wait(s)",
                "Max wait(ms)",
                "Hold(s)",
                "Max hold(ms)",
                "Max waiters",
            ],
            rows,
        )
    }
}
