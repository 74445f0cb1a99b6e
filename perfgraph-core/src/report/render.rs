//! The tables printed at exit, in the order `PERFGRAPH_REPORT` prints them.

use super::Report;
use crate::base::config::ReportSelection;

impl Report {
    /// The reports `selection` asks for, as printed at exit: for each, a blank line, its heading and its
    /// table (MOOSE's order: graph, branch, sections; then latency, threads, async, alloc, cpu, and for a
    /// merge of many processes' runs, processes), then the footer lines. Empty when nothing is selected.
    pub fn render(&self, selection: &ReportSelection) -> String {
        if selection.is_empty() {
            return String::new();
        }
        self.tables(selection) + &self.footer()
    }

    /// [`render`](Report::render) without the footer lines, for the exit to put the tables made
    /// elsewhere (the critical path's) before them.
    pub(crate) fn tables(&self, selection: &ReportSelection) -> String {
        let mut out = String::from("\n");
        if selection.graph {
            out.push_str("\nPerformance Graph:\n");
            out.push_str(&self.graph_table());
        }
        if selection.branch {
            out.push_str("\nHeaviest Branch:\n");
            out.push_str(&self.branch_table());
        }
        if let Some(n) = selection.sections {
            out.push_str("\nHeaviest Sections:\n");
            out.push_str(&self.sections_table(n));
        }
        if selection.latency {
            out.push_str("\nLatency:\n");
            out.push_str(&self.latency_table(selection.sections.unwrap_or(10)));
        }
        if selection.threads {
            out.push_str("\nThreads:\n");
            out.push_str(&self.threads_table());
        }
        // Only a run with timed futures has an async table to print.
        if selection.asyncs && self.tree.nodes.iter().any(|n| n.is_async()) {
            out.push_str("\nAsync Sections:\n");
            out.push_str(&self.async_table());
        }
        // Only a run with the counting allocator installed has allocations to print.
        if selection.alloc && self.run.heap_counted {
            out.push_str("\nAllocations:\n");
            out.push_str(&self.alloc_table());
        }
        // Only a run where some section measured its CPU time has a CPU table to print.
        if selection.cpu && self.cpu_measured() {
            out.push_str("\nCPU:\n");
            out.push_str(&self.cpu_table());
        }
        // Only a run that set some counter has a counters table to print.
        if selection.counters && !self.run.counters.is_empty() {
            out.push_str("\nCounters:\n");
            out.push_str(&self.counters_table());
        }
        // Only a run that used some lock of `perfgraph_core::sync` has a locks table to print.
        if selection.locks && !self.run.locks.is_empty() {
            out.push_str("\nLocks:\n");
            out.push_str(&self.locks_table());
        }
        if self.merged.is_some() {
            out.push_str("\nProcesses:\n");
            out.push_str(&self.processes_table());
        }
        out
    }
}
