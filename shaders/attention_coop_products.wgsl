// A subgroup's q halves, one pair per T dims.
struct Queries {
    h0: MatA, h1: MatA, h2: MatA, h3: MatA, h4: MatA, h5: MatA, h6: MatA, h7: MatA,
    l0: MatA, l1: MatA, l2: MatA, l3: MatA, l4: MatA, l5: MatA, l6: MatA, l7: MatA,
}

// A subgroup's output, one T × T tile per T dims.
struct Output {
    c0: MatC, c1: MatC, c2: MatC, c3: MatC, c4: MatC, c5: MatC, c6: MatC, c7: MatC,
}

fn load_queries(at: u32) -> Queries {
    var q: Queries;
    q.h0 = coopLoadT<MatA>(&planes[at / 4u], D4);
    q.l0 = coopLoadT<MatA>(&planes[(at + p.padded_len * D) / 4u], D4);
    if D_TILES > 1u {
        q.h1 = coopLoadT<MatA>(&planes[(at + T) / 4u], D4);
        q.l1 = coopLoadT<MatA>(&planes[(at + p.padded_len * D + T) / 4u], D4);
    }
    if D_TILES > 2u {
        q.h2 = coopLoadT<MatA>(&planes[(at + 2u * T) / 4u], D4);
        q.l2 = coopLoadT<MatA>(&planes[(at + p.padded_len * D + 2u * T) / 4u], D4);
    }
    if D_TILES > 3u {
        q.h3 = coopLoadT<MatA>(&planes[(at + 3u * T) / 4u], D4);
        q.l3 = coopLoadT<MatA>(&planes[(at + p.padded_len * D + 3u * T) / 4u], D4);
    }
    if D_TILES > 4u {
        q.h4 = coopLoadT<MatA>(&planes[(at + 4u * T) / 4u], D4);
        q.l4 = coopLoadT<MatA>(&planes[(at + p.padded_len * D + 4u * T) / 4u], D4);
    }
    if D_TILES > 5u {
        q.h5 = coopLoadT<MatA>(&planes[(at + 5u * T) / 4u], D4);
        q.l5 = coopLoadT<MatA>(&planes[(at + p.padded_len * D + 5u * T) / 4u], D4);
    }
    if D_TILES > 6u {
        q.h6 = coopLoadT<MatA>(&planes[(at + 6u * T) / 4u], D4);
        q.l6 = coopLoadT<MatA>(&planes[(at + p.padded_len * D + 6u * T) / 4u], D4);
    }
    if D_TILES > 7u {
        q.h7 = coopLoadT<MatA>(&planes[(at + 7u * T) / 4u], D4);
        q.l7 = coopLoadT<MatA>(&planes[(at + p.padded_len * D + 7u * T) / 4u], D4);
    }
    return q;
}

// q̃·k̃ᵀ for T dims against the staged keys whose hi row of those dims starts at group `at` of `kv`: three products
// from zero (see the precision note).
fn score_step(qh: MatA, ql: MatA, at: u32) -> MatC {
    let kh = coopLoad<MatB>(&kv[at], KV_ROW4);
    let kl = coopLoad<MatB>(&kv[at + BK * KV_ROW4], KV_ROW4);
    return coopMultiplyAdd(ql, kh, coopMultiplyAdd(qh, kl, coopMultiplyAdd(qh, kh, MatC())));
}

// The T × T scores of this subgroup's queries against staged key tile `jt`.
fn score_tile(q: ptr<function, Queries>, jt: u32) -> MatC {
    let at = jt * T * KV_ROW4;
    var s = score_step((*q).h0, (*q).l0, at);
    if D_TILES > 1u {
        s = s + score_step((*q).h1, (*q).l1, at + T / 4u);
    }
    if D_TILES > 2u {
        s = s + score_step((*q).h2, (*q).l2, at + 2u * T / 4u);
    }
    if D_TILES > 3u {
        s = s + score_step((*q).h3, (*q).l3, at + 3u * T / 4u);
    }
    if D_TILES > 4u {
        s = s + score_step((*q).h4, (*q).l4, at + 4u * T / 4u);
    }
    if D_TILES > 5u {
        s = s + score_step((*q).h5, (*q).l5, at + 5u * T / 4u);
    }
    if D_TILES > 6u {
        s = s + score_step((*q).h6, (*q).l6, at + 6u * T / 4u);
    }
    if D_TILES > 7u {
        s = s + score_step((*q).h7, (*q).l7, at + 7u * T / 4u);
    }
    return s;
}

// Pass 1's cheap scores (qh·kh alone; only k's hi rows are staged) of tile `jt`. A function of its own, not a flag of
// `score_tile`: cooperative-matrix operations must stay in uniform control flow, and naga takes a function's
// arguments as non-uniform.
fn cheap_tile(q: ptr<function, Queries>, jt: u32) -> MatC {
    let at = jt * T * KV_ROW4;
    var s = coopMultiplyAdd((*q).h0, coopLoad<MatB>(&kv[at], KV_ROW4), MatC());
    if D_TILES > 1u {
        s = coopMultiplyAdd((*q).h1, coopLoad<MatB>(&kv[at + T / 4u], KV_ROW4), s);
    }
    if D_TILES > 2u {
        s = coopMultiplyAdd((*q).h2, coopLoad<MatB>(&kv[at + 2u * T / 4u], KV_ROW4), s);
    }
    if D_TILES > 3u {
        s = coopMultiplyAdd((*q).h3, coopLoad<MatB>(&kv[at + 3u * T / 4u], KV_ROW4), s);
    }
    if D_TILES > 4u {
        s = coopMultiplyAdd((*q).h4, coopLoad<MatB>(&kv[at + 4u * T / 4u], KV_ROW4), s);
    }
    if D_TILES > 5u {
        s = coopMultiplyAdd((*q).h5, coopLoad<MatB>(&kv[at + 5u * T / 4u], KV_ROW4), s);
    }
    if D_TILES > 6u {
        s = coopMultiplyAdd((*q).h6, coopLoad<MatB>(&kv[at + 6u * T / 4u], KV_ROW4), s);
    }
    if D_TILES > 7u {
        s = coopMultiplyAdd((*q).h7, coopLoad<MatB>(&kv[at + 7u * T / 4u], KV_ROW4), s);
    }
    return s;
}

// The staged block's scores of this subgroup (raw: scaled by 2^(eq + ek)) into its area of `scores`: exact, or pass
// 1's cheap ones.
fn score_block(q: ptr<function, Queries>, s_at: u32) {
    for (var jt = 0u; jt < KEY_TILES; jt++) {
        coopStoreT(score_tile(q, jt), &scores[s_at + jt * T / 4u], S_ROW4);
    }
}

fn cheap_block(q: ptr<function, Queries>, s_at: u32) {
    for (var jt = 0u; jt < KEY_TILES; jt++) {
        coopStoreT(cheap_tile(q, jt), &scores[s_at + jt * T / 4u], S_ROW4);
    }
}

// o + p̃·ṽ for T keys of staged tile `jt` and T dims whose hi row starts at group `at` of `kv`: three products from
// zero added to o, or with rounded operands one product onto o.
fn value_step(o: MatC, ph: MatA, pl: MatA, at: u32) -> MatC {
    let vh = coopLoadT<MatB>(&kv[at], KV_ROW4);
    if !EXACT {
        return coopMultiplyAdd(ph, vh, o);
    }
    let vl = coopLoadT<MatB>(&kv[at + BK * KV_ROW4], KV_ROW4);
    return o + coopMultiplyAdd(pl, vh, coopMultiplyAdd(ph, vl, coopMultiplyAdd(ph, vh, MatC())));
}

// o += p̃·ṽ for this subgroup's probabilities (hi rows at group `p_hi` of `probs`, lo rows T further) and the staged v.
fn value_block(o: ptr<function, Output>, p_hi: u32) {
    for (var jt = 0u; jt < KEY_TILES; jt++) {
        let ph = coopLoadT<MatA>(&probs[p_hi + jt * T / 4u], P_ROW4);
        // Rounded operands have no lo rows: pl is then ph again, and unused.
        let pl = coopLoadT<MatA>(&probs[p_hi + HALVES / 2u * T * P_ROW4 + jt * T / 4u], P_ROW4);
        let at = jt * T * KV_ROW4;
        (*o).c0 = value_step((*o).c0, ph, pl, at);
        if D_TILES > 1u {
            (*o).c1 = value_step((*o).c1, ph, pl, at + T / 4u);
        }
        if D_TILES > 2u {
            (*o).c2 = value_step((*o).c2, ph, pl, at + 2u * T / 4u);
        }
        if D_TILES > 3u {
            (*o).c3 = value_step((*o).c3, ph, pl, at + 3u * T / 4u);
        }
        if D_TILES > 4u {
            (*o).c4 = value_step((*o).c4, ph, pl, at + 4u * T / 4u);
        }
        if D_TILES > 5u {
            (*o).c5 = value_step((*o).c5, ph, pl, at + 5u * T / 4u);
        }
        if D_TILES > 6u {
            (*o).c6 = value_step((*o).c6, ph, pl, at + 6u * T / 4u);
        }
        if D_TILES > 7u {
            (*o).c7 = value_step((*o).c7, ph, pl, at + 7u * T / 4u);
        }
    }
}
