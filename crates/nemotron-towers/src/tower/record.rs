//! Recording the tower onto a command buffer: the diarization steps' projection, the layers (submitted in parts when
//! asked), the residual norms.

use super::*;

impl Tower {
    /// Projects the features of diarization steps (uploaded by [`Tower::upload_steps`]) in one product into `h`
    /// (free until the input norm writes it), then moves each sequence's rows after its gathered ones in `x`.
    pub(super) fn record_step_projection(
        &self,
        rec: &mut Recorder<'_>,
        work: &Workspace,
        embedded: &[usize],
        batch: &[Sequence<'_>],
        seq_len: usize,
    ) -> Result<()> {
        let (d, stacked) = (self.config.hidden, self.config.stacked_features());
        let new_rows: Vec<usize> = batch.iter().zip(embedded).map(|(s, &e)| s.valid.len() - e).collect();
        let total = new_rows.iter().sum();
        let shape = GemmShape { n: total, m: d, k: stacked };
        // One product, never split along k (`gemm`, not `gemm_partials`), on either kernel: a row's projection is
        // the same bits whatever rows share the product, so the cache and FIFO rows a step keeps are those any other
        // step would have projected (an offline chunk's context frames are projected again by the next chunk).
        gemm(rec, &work.input, self.input_projection()?, &work.h, shape, &Epilogue::default())?;
        let mut from = 0;
        for (i, (&embedded, &rows)) in embedded.iter().zip(&new_rows).enumerate() {
            rec.copy(&work.h, from * d, &work.x, (i * seq_len + embedded) * d, rows * d)?;
            from += rows;
        }
        Ok(())
    }

    /// Records the whole tower over `batch · seq_len` rows already in the workspace (submitting parts of it as
    /// `submission` says); returns the buffer holding the `[rows, d]` output.
    pub(crate) fn record<'w>(
        &self,
        rec: &mut Recorder<'_>,
        work: &'w Workspace,
        rope: &RopeTable,
        kind: InputKind<'_>,
        (batch, seq_len): (usize, usize),
        submission: Submission,
    ) -> Result<&'w GpuBuffer> {
        let c = &self.config;
        let (d, rows) = (c.hidden, batch * seq_len);
        let w = &self.weights;
        match kind {
            InputKind::Features => {
                let shape = GemmShape { n: rows, m: d, k: c.stacked_features() };
                gemm(rec, &work.input, self.input_projection()?, &work.x, shape, &Epilogue::default())?
            }
            // A step's chunks were projected into `x` by `Tower::record_step_projection`.
            InputKind::GatheredThenFeatures { .. } | InputKind::Embeddings => {}
        }
        norm(rec, &w.embed_norm, (&work.x, &work.h, None), rows, d)?;
        // Pre-norm blocks: h is the residual stream, a the normalised input of the next product. The two residual
        // products (out-projection and fc2) are narrow (d columns), so they run as partial products split along k
        // (enough workgroups to fill the GPU) that the next LayerNorm adds to h, in order, before normalising.
        let Some(first) = w.layers.first() else {
            norm(rec, &w.final_norm, (&work.h, &work.a, None), rows, d)?;
            return Ok(&work.a);
        };
        // The LayerNorms that write `a` write its row scales too where the product that reads `a` runs on tensor
        // cores, so that product skips its own pass over the rows.
        let scales = |w: &Weight| w.path().on_tensor_cores().then_some(&work.a_scales);
        norm(rec, &first.norm1, (&work.h, &work.a, scales(&first.qkv)), rows, d)?;
        // Multiply-adds since the last part was submitted, counted at each cut.
        let (attention_flops, mlp_flops) = self.half_layer_flops(batch, seq_len);
        let mut pending = 0.0;
        let mut cut = |rec: &mut Recorder<'_>, flops: f64| -> Result<()> {
            pending += flops;
            if matches!(submission, Submission::Parts { flops } if pending >= flops) {
                rec.submit_part()?;
                pending = 0.0;
            }
            Ok(())
        };
        for (l, layer) in w.layers.iter().enumerate() {
            // Attention runs at the products' precision (on the tensor cores where they are: f32-accurate, or over
            // rounded operands with the fast products); there it adds the q/k/v product's slices itself, so the
            // product may be split along k where that fills the GPU's waves better.
            let precision = layer.qkv.path().precision();
            let shape = AttentionShape { seqs: batch, seq_len, heads: c.heads, head_dim: c.head_dim };
            let qkv_shape = GemmShape { n: rows, m: 3 * d, k: d };
            let a = (&work.a, scales(&layer.qkv));
            let (qkv, slices) = if rotary_attention_on_tensor_cores(&self.gpu, shape, precision) {
                let slices = wave_slices(&self.gpu, &layer.qkv, rows, MAX_QKV_SLICES);
                let partials = self.gpu.scratch("tower partial products", slices * rows * 3 * d)?;
                let slices = gemm_partials_scaled(rec, a, &layer.qkv, &partials, qkv_shape, slices)?;
                (partials, slices)
            } else {
                gemm_scaled(rec, a, &layer.qkv, &work.qkv, qkv_shape, &Epilogue::default())?;
                (work.qkv.clone(), 1)
            };
            let qk = layer.qk_norm.as_ref().map(|(q, k)| QkNorm {
                q_weight: &q.weight,
                q_bias: &q.bias,
                k_weight: &k.weight,
                k_bias: &k.bias,
            });
            let prologue = QkPrologue { rope, norm: qk.as_ref(), slices };
            rotary_attention(rec, [&qkv, &work.mask, &work.attended], &prologue, shape, precision)?;
            let normalized = (&work.a, scales(&layer.fc1.weight));
            self.residual(rec, &work.attended, &layer.out, (&work.h, &layer.norm2, normalized), rows)?;
            cut(rec, attention_flops)?;
            let gelu = Epilogue { bias: layer.fc1.bias.as_ref(), activation: Activation::Gelu, accumulate: false };
            let fc1_shape = GemmShape { n: rows, m: c.intermediate, k: d };
            gemm_scaled(rec, normalized, &layer.fc1.weight, &work.inner, fc1_shape, &gelu)?;
            let next = w.layers.get(l + 1);
            let next_norm = next.map_or(&w.final_norm, |next| &next.norm1);
            let normalized = (&work.a, next.and_then(|next| scales(&next.qkv)));
            self.residual(rec, &work.inner, &layer.fc2, (&work.h, next_norm, normalized), rows)?;
            cut(rec, mlp_flops)?;
        }
        Ok(&work.a)
    }

    /// Floating-point operations of a layer's attention half (q/k/v, scores, probabilities × v, out-projection) and
    /// of its MLP half over `batch` sequences of `seq_len` rows.
    pub(super) fn half_layer_flops(&self, batch: usize, seq_len: usize) -> (f64, f64) {
        let c = &self.config;
        let (rows, d, inner) = ((batch * seq_len) as f64, c.hidden as f64, c.intermediate as f64);
        let attention = 2.0 * rows * d * (4.0 * d) + 4.0 * rows * seq_len as f64 * d;
        (attention, 4.0 * rows * d * inner)
    }

    /// `h += input · Wᵀ + bias`, then `a = LayerNorm(h)` (and its row scales, where asked): the product split along
    /// k into partial products that the norm kernel adds to h in order.
    fn residual(
        &self,
        rec: &mut Recorder<'_>,
        input: &GpuBuffer,
        linear: &Linear<Weight, GpuBuffer>,
        (h, norm, (a, scales)): (&GpuBuffer, &Norm<GpuBuffer>, (&GpuBuffer, Option<&GpuBuffer>)),
        rows: usize,
    ) -> Result<()> {
        let (d, k) = (linear.weight.rows, linear.weight.cols);
        let slices = auto_slices(&self.gpu, &linear.weight, rows);
        let partials = self.gpu.scratch("tower partial products", slices * rows * d)?;
        let slices = gemm_partials(rec, input, &linear.weight, &partials, GemmShape { n: rows, m: d, k }, slices)?;
        let bias = linear.bias.as_ref().unwrap_or(&self.zero_bias);
        let residual = Residual { stream: h, partials: &partials, slices, bias };
        residual_layer_norm(rec, &residual, &norm.params(), a, rows, d, scales)?;
        Ok(())
    }
}

/// `y = LayerNorm(x)`, and the row scales of `y` where given.
fn norm(
    rec: &mut Recorder<'_>,
    n: &Norm<GpuBuffer>,
    (x, y, scales): (&GpuBuffer, &GpuBuffer, Option<&GpuBuffer>),
    rows: usize,
    width: usize,
) -> Result<()> {
    Ok(layer_norm(rec, x, &n.params(), y, rows, width, scales)?)
}

impl Tower {
    /// Every pipeline a call of this tower can record over sequences of up to `longest` rows, in any batch that fits
    /// [`Tower::max_rows`]: the input projection (the diarization steps' too), the norms, each
    /// layer's products and its attention on whichever kernels the batches take ([`rotary_attention_kernels`]).
    pub(crate) fn kernels(&self, longest: usize) -> Vec<KernelVariant> {
        let (c, w, gpu) = (&self.config, &self.weights, &self.gpu);
        let plain = Epilogue::default();
        let on_tensor_cores = |w: &Weight| w.path().on_tensor_cores();
        let max_rows = self.max_rows();
        let mut kernels = Vec::new();
        if let Some(projection) = &w.input_projection {
            kernels.extend(gemm_kernels(gpu, projection, &plain, false));
        }
        kernels.push(layer_norm::kernel(false, false, c.hidden));
        let first_scaled = w.layers.first().is_some_and(|first| on_tensor_cores(&first.qkv));
        kernels.push(layer_norm::kernel(false, first_scaled, c.hidden));
        // Every layer has the same shapes: the attention's batches differ only by the q/k norm and the precision.
        let mut attentions: Vec<((bool, Precision), AttentionKernels)> = Vec::new();
        for (l, layer) in w.layers.iter().enumerate() {
            let scaled = on_tensor_cores(&layer.qkv);
            let key = (layer.qk_norm.is_some(), layer.qkv.path().precision());
            let attention = match attentions.iter().find(|(k, _)| *k == key) {
                Some((_, attention)) => attention.clone(),
                None => {
                    let range =
                        AttentionRange { heads: c.heads, head_dim: c.head_dim, has_norm: key.0, longest, max_rows };
                    let attention = rotary_attention_kernels(gpu, range, key.1);
                    attentions.push((key, attention.clone()));
                    attention
                }
            };
            if attention.tensor_cores {
                kernels.extend(gemm_partials_kernels(gpu, &layer.qkv, scaled, max_rows));
            }
            if attention.f32 {
                kernels.extend(gemm_kernels(gpu, &layer.qkv, &plain, scaled));
            }
            kernels.extend(attention.kernels);
            kernels.extend(gemm_partials_kernels(gpu, &layer.out.weight, false, max_rows));
            kernels.push(layer_norm::kernel(true, on_tensor_cores(&layer.fc1.weight), c.hidden));
            let gelu = Epilogue { bias: layer.fc1.bias.as_ref(), activation: Activation::Gelu, accumulate: false };
            kernels.extend(gemm_kernels(gpu, &layer.fc1.weight, &gelu, on_tensor_cores(&layer.fc1.weight)));
            kernels.extend(gemm_partials_kernels(gpu, &layer.fc2.weight, false, max_rows));
            let next_scaled = w.layers.get(l + 1).is_some_and(|next| on_tensor_cores(&next.qkv));
            kernels.push(layer_norm::kernel(true, next_scaled, c.hidden));
        }
        kernels
    }
}
