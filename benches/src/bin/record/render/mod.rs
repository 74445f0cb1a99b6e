//! Rendering: the markdown of `docs/performance.md`, a pure function of the measured [`Record`]. Nothing
//! here measures, reads a file or runs a process.

mod alloc_peers;
mod capture;
mod cpu;
mod demo;
mod fmt;
mod header;
mod heap;
pub mod html;
mod latency;
mod layer;
mod layouts;
pub mod lifecycle;
mod listen;
mod overhead;
mod rows;
mod rss;
mod targets;
pub mod trace;

#[cfg(test)]
mod tests;

use crate::measure::Record;

/// The whole record, section by section.
pub fn render(r: &Record) -> String {
    let mut doc = String::new();
    header::write(&mut doc, &r.machine);
    overhead::table(&mut doc, &r.results);
    let exit_added = r
        .demo
        .as_ref()
        .map(|d| d.process.on_median - d.process.off_median);
    targets::write(
        &mut doc,
        &r.results,
        &r.layouts,
        r.layer.as_ref(),
        exit_added,
    );
    overhead::cpu_table(&mut doc, &r.results);
    targets::enabled_cost(&mut doc, &r.results, &r.machine.clock_source);
    layouts::write(&mut doc, &r.layouts);
    layer::write(&mut doc, r.layer.as_ref());
    rss::write(&mut doc, &r.rss);
    demo::write(&mut doc, r.demo.as_ref());
    capture::write(&mut doc, &r.capture);
    lifecycle::write(&mut doc, &r.lifecycle);
    trace::write(&mut doc, &r.trace);
    latency::write(&mut doc, &r.results, r.merge.as_ref());
    heap::write(&mut doc, &r.heap);
    alloc_peers::write(&mut doc, r.alloc_peers.as_ref());
    cpu::write(&mut doc, &r.cpu);
    listen::write(&mut doc, &r.listen);
    doc
}

/// The section on the control socket alone (`record --listen`).
pub fn listen_section(l: &crate::measure::listen::Listen) -> String {
    let mut doc = String::new();
    listen::write(&mut doc, l);
    doc
}

/// The section on exact heap accounting alone (`record --heap`).
pub fn heap_section(h: &crate::measure::heap::Heap) -> String {
    let mut doc = String::new();
    heap::write(&mut doc, h);
    doc
}

/// The section on CPU time per section alone (`record --cpu`).
pub fn cpu_section(c: &crate::measure::cpu::CpuClock) -> String {
    let mut doc = String::new();
    cpu::write(&mut doc, c);
    doc
}

/// The `TracingLayer` target's row and its section alone (`record --layer BIN`).
pub fn layer_section(l: Option<&crate::measure::layer::LayerRounds>) -> String {
    let mut doc = String::new();
    targets::layer_row(&mut doc, l);
    doc.push('\n');
    layer::write(&mut doc, l);
    doc
}
