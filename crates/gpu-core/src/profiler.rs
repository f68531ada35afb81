//! GPU timestamps (around each dispatch, or one span over a whole submission), resolved after the
//! submission and summed per kernel.

use std::collections::HashMap;

use crate::error::{GpuError, Result};
use crate::gpu::Gpu;
use crate::wait::map_for_reading;

const QUERIES_PER_SET: u32 = wgpu::QUERY_SET_MAX_QUERIES;

pub(crate) struct PendingProfile {
    labels: Vec<String>,
    sets: Vec<wgpu::QuerySet>,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
}

impl PendingProfile {
    pub(crate) fn new(gpu: &Gpu, labels: Vec<String>) -> Self {
        let device = gpu.device();
        let queries = labels.len() as u32 * 2;
        let sets = (0..queries.div_ceil(QUERIES_PER_SET))
            .map(|i| {
                device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("profiler"),
                    ty: wgpu::QueryType::Timestamp,
                    count: (queries - i * QUERIES_PER_SET).min(QUERIES_PER_SET),
                })
            })
            .collect();
        let bytes = queries.max(2) as u64 * 8;
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("profiler resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("profiler staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self { labels, sets, resolve, staging }
    }

    /// Timestamp writes for entry `index` (queries 2·index and 2·index+1): the start, the end, or
    /// both, of the pass being opened.
    pub(crate) fn writes(&self, index: u32, start: bool, end: bool) -> wgpu::ComputePassTimestampWrites<'_> {
        let first = index * 2;
        wgpu::ComputePassTimestampWrites {
            query_set: &self.sets[(first / QUERIES_PER_SET) as usize],
            beginning_of_pass_write_index: start.then_some(first % QUERIES_PER_SET),
            end_of_pass_write_index: end.then_some(first % QUERIES_PER_SET + 1),
        }
    }

    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        let total = self.labels.len() as u32 * 2;
        for (i, set) in self.sets.iter().enumerate() {
            let first = i as u32 * QUERIES_PER_SET;
            let count = (total - first).min(QUERIES_PER_SET);
            encoder.resolve_query_set(set, 0..count, &self.resolve, first as u64 * 8);
        }
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.staging, 0, self.resolve.size());
    }

    pub(crate) async fn read(self, gpu: &Gpu) -> Result<Profile> {
        let mapping = map_for_reading(self.staging.slice(..));
        gpu.mapped(mapping, None, "profiler timestamps").await?;
        let failed = |message: String| GpuError::Readback { what: "profiler timestamps".into(), message };
        let ticks: Vec<u64> =
            bytemuck::cast_slice(&self.staging.get_mapped_range(..).map_err(|e| failed(e.to_string()))?).to_vec();
        let period = gpu.queue().get_timestamp_period() as f64;
        let entries = self
            .labels
            .into_iter()
            .enumerate()
            .map(|(i, label)| (label, ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * period))
            .collect();
        Ok(Profile { entries })
    }
}

/// GPU time of each dispatch of one submission, in nanoseconds.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// (kernel label, nanoseconds) in dispatch order.
    pub entries: Vec<(String, f64)>,
}

impl Profile {
    /// Sum over all dispatches, in nanoseconds.
    pub fn total_ns(&self) -> f64 {
        self.entries.iter().map(|(_, ns)| ns).sum()
    }

    /// Adds another submission's dispatches.
    pub fn extend(&mut self, other: Profile) {
        self.entries.extend(other.entries);
    }

    /// (label, calls, total ns) per kernel, most expensive first.
    pub fn by_kernel(&self) -> Vec<(String, usize, f64)> {
        let mut sums: HashMap<&str, (usize, f64)> = HashMap::new();
        for (label, ns) in &self.entries {
            let entry = sums.entry(label).or_default();
            entry.0 += 1;
            entry.1 += ns;
        }
        let mut rows: Vec<(String, usize, f64)> =
            sums.into_iter().map(|(label, (calls, ns))| (label.to_string(), calls, ns)).collect();
        rows.sort_by(|a, b| b.2.total_cmp(&a.2));
        rows
    }

    /// A table of [`Profile::by_kernel`] in milliseconds with the share of the total.
    pub fn report(&self) -> String {
        let total = self.total_ns().max(1.0);
        let mut out = format!("{:>10} {:>6} {:>6}  kernel\n", "ms", "calls", "%");
        for (label, calls, ns) in self.by_kernel() {
            out.push_str(&format!("{:>10.3} {:>6} {:>5.1}%  {label}\n", ns / 1e6, calls, 100.0 * ns / total));
        }
        out.push_str(&format!("{:>10.3} {:>6}         total\n", total / 1e6, self.entries.len()));
        out
    }
}
