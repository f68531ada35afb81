//! Bind groups keyed by (storage layout, buffers), so a forward pass that reuses its buffers
//! builds each bind group once. Entries whose buffers have all been dropped are pruned.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::buffer::{BufferInner, GpuBuffer};
use crate::pipeline::StorageLayout;

#[derive(Default)]
pub(crate) struct BindGroupCache {
    entries: HashMap<(u64, Vec<u64>), Entry>,
    prune_at: usize,
}

struct Entry {
    group: wgpu::BindGroup,
    buffers: Vec<Weak<BufferInner>>,
}

impl BindGroupCache {
    pub(crate) fn get(
        &mut self,
        device: &wgpu::Device,
        layout: &StorageLayout,
        buffers: &[&GpuBuffer],
    ) -> wgpu::BindGroup {
        let key = (layout.id, buffers.iter().map(|b| b.inner.id).collect::<Vec<_>>());
        if let Some(entry) = self.entries.get(&key) {
            return entry.group.clone();
        }
        self.prune_if_large();
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.inner.buffer.as_entire_binding() })
            .collect();
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout.layout,
            entries: &entries,
        });
        let weak = buffers.iter().map(|b| Arc::downgrade(&b.inner)).collect();
        self.entries.insert(key, Entry { group: group.clone(), buffers: weak });
        group
    }

    fn prune_if_large(&mut self) {
        if self.entries.len() < self.prune_at.max(256) {
            return;
        }
        self.entries.retain(|_, entry| entry.buffers.iter().all(|b| b.strong_count() > 0));
        self.prune_at = self.entries.len() * 2;
    }
}
