//! The shapes launchers take, as named fields rather than runs of bare counts: a matrix product's, an attention's,
//! and the q/k rows `qk_norm_rope` rotates.

/// A matrix product `Y[n×m] = X[n×k] · Wᵀ`, with W `[m×k]` (PyTorch's `[out, in]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmShape {
    /// Rows of X and of Y.
    pub n: usize,
    /// Rows of W: columns of Y.
    pub m: usize,
    /// Columns of X and of W: the depth of the product.
    pub k: usize,
}

/// Multi-head attention over `seqs` independent sequences of `seq_len` rows each (row `r = s·seq_len + i`), in
/// `heads` heads of `head_dim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttentionShape {
    /// Independent sequences.
    pub seqs: usize,
    /// Rows of each sequence.
    pub seq_len: usize,
    /// Heads.
    pub heads: usize,
    /// Dimensions of a head.
    pub head_dim: usize,
}

impl AttentionShape {
    /// Rows of q/k/v and of the output: `seqs · seq_len`.
    pub fn rows(self) -> usize {
        self.seqs * self.seq_len
    }

    /// Columns of the output, and of each of q, k and v: `heads · head_dim`.
    pub fn width(self) -> usize {
        self.heads * self.head_dim
    }
}

/// Rows of packed q/k/v (`[rows, 3·heads·head_dim]`) whose q and k heads get a per-head norm and RoPE, row `r` at
/// position `r % seq_len` (the last sequence may be partial).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QkShape {
    /// Rows.
    pub rows: usize,
    /// Rows of a sequence: the positions restart every `seq_len` rows.
    pub seq_len: usize,
    /// Heads of each of q, k and v.
    pub heads: usize,
    /// Dimensions of a head.
    pub head_dim: usize,
}

impl From<AttentionShape> for QkShape {
    /// The rows of an attention's q/k/v, every sequence's positions from 0.
    fn from(shape: AttentionShape) -> Self {
        let AttentionShape { seqs: _, seq_len, heads, head_dim } = shape;
        Self { rows: shape.rows(), seq_len, heads, head_dim }
    }
}
