"""The scoring cases: RTTM pairs (+ UEM), hand-written or drawn from a fixed seed, written to
`testdata/scoring/cases/` by `scoring.make_scoring`."""


def rttm(rows):
    """rows: (uri, start text, duration text, speaker) -> RTTM text (numbers kept as written)."""
    return "".join(f"SPEAKER {uri} 1 {start} {dur} <NA> <NA> {spk} <NA> <NA>\n" for uri, start, dur, spk in rows)


def rows1(uri, items):
    """items: (start, duration, speaker) with numbers as strings or floats."""
    return [(uri, fmt(s), fmt(d), spk) for s, d, spk in items]


def fmt(x):
    return x if isinstance(x, str) else f"{x:.3f}"


def random_conversation(rng, uri, speakers, length, mean_turn=3.0, overlap_prob=0.15):
    """Turns (start, duration, speaker) of a synthetic conversation, times on a 1 ms grid."""
    items = []
    t = rng.uniform(0.0, 1.0)
    previous = None
    while t < length - 0.5:
        spk = rng.choice([s for s in speakers if s != previous] or speakers)
        dur = min(rng.expovariate(1.0 / mean_turn) + 0.2, length - t)
        items.append((round(t, 3), round(dur, 3), spk))
        if rng.random() < overlap_prob:
            other = rng.choice([s for s in speakers if s != spk] or speakers)
            o_start = t + rng.uniform(0.0, dur)
            items.append((round(o_start, 3), round(rng.uniform(0.2, 1.5), 3), other))
        previous = spk
        t += dur + rng.choice([0.0, 0.0, rng.uniform(0.05, 1.0), rng.uniform(-0.4, 0.0)])
    return items


def perturb(rng, items, names, jitter=0.25, miss=0.1, false_alarm=0.1, swap=0.1, length=None):
    """A hypothesis from reference turns: jittered boundaries, renamed speakers, some misses,
    some confusions and some false alarms."""
    out = []
    for start, dur, spk in items:
        if rng.random() < miss:
            continue
        s = max(0.0, start + rng.uniform(-jitter, jitter))
        e = max(s + 0.05, start + dur + rng.uniform(-jitter, jitter))
        name = names[spk]
        if rng.random() < swap:
            name = rng.choice(sorted(set(names.values())))
        out.append((round(s, 3), round(e - s, 3), name))
    if length:
        for _ in range(int(len(items) * false_alarm) + 1):
            s = rng.uniform(0.0, length - 1.0)
            out.append((round(s, 3), round(rng.uniform(0.1, 1.5), 3), rng.choice(sorted(set(names.values())))))
    return out


def scoring_cases():
    """(name, description, ref text, hyp text, uem text or None)."""
    import random

    cases = []

    def add(name, description, ref, hyp, uem=None):
        cases.append((name, description, ref, hyp, uem))

    add(
        "01-identical",
        "hypothesis equals the reference up to speaker names",
        rttm(rows1("rec1", [("0.50", "2.70", "alice"), ("3.40", "1.60", "bob"), ("5.20", "2.30", "alice")])),
        rttm(rows1("rec1", [("0.50", "2.70", "spk0"), ("3.40", "1.60", "spk1"), ("5.20", "2.30", "spk0")])),
    )
    add(
        "02-disjoint",
        "reference and hypothesis never overlap in time: all missed + all false alarm, empty mapping",
        rttm(rows1("rec1", [("0.00", "2.00", "alice"), ("2.50", "1.50", "bob")])),
        rttm(rows1("rec1", [("5.00", "2.00", "spk0"), ("7.50", "1.00", "spk1")])),
    )
    add(
        "03-boundary-errors",
        "three speakers, shifted boundaries, hypothesis names in another order than the reference's",
        rttm(rows1("rec1", [("0.00", "4.00", "alice"), ("4.00", "3.00", "bob"), ("7.00", "2.50", "alice"), ("9.50", "2.00", "carol")])),
        rttm(rows1("rec1", [("0.20", "3.70", "spk1"), ("3.90", "3.30", "spk0"), ("7.20", "2.10", "spk1"), ("9.30", "2.40", "spk2")])),
    )
    add(
        "04-overlap-in-ref",
        "overlapping speech in the reference only (missed in overlap; skip_overlap removes it)",
        rttm(rows1("rec1", [("0.00", "5.00", "alice"), ("3.00", "5.00", "bob"), ("6.00", "2.00", "carol")])),
        rttm(rows1("rec1", [("0.00", "4.00", "spk0"), ("4.00", "4.00", "spk1")])),
    )
    add(
        "05-overlap-in-hyp",
        "overlapping speech in the hypothesis only (false alarm in overlap; skip_overlap keeps it)",
        rttm(rows1("rec1", [("0.00", "4.00", "alice"), ("4.00", "4.00", "bob")])),
        rttm(rows1("rec1", [("0.00", "5.00", "spk0"), ("3.00", "5.00", "spk1"), ("6.50", "1.00", "spk2")])),
    )
    add(
        "06-overlap-both",
        "overlap on both sides, with confusion",
        rttm(rows1("rec1", [("1.0", "3.0", "A"), ("2.0", "4.0", "B"), ("5.5", "2.0", "C"), ("7.0", "1.0", "A")])),
        rttm(rows1("rec1", [("0.8", "2.5", "x"), ("2.2", "4.1", "y"), ("5.0", "1.2", "x"), ("6.9", "1.5", "z")])),
    )
    add(
        "07-missing-hyp-speaker",
        "three reference speakers, two hypothesis speakers (one reference speaker stays unmapped)",
        rttm(rows1("rec1", [("0", "3", "alice"), ("3", "3", "bob"), ("6", "3", "carol"), ("9", "2", "alice")])),
        rttm(rows1("rec1", [("0", "3.1", "s1"), ("2.9", "5.6", "s2"), ("9", "2", "s1")])),
    )
    add(
        "08-extra-hyp-speakers",
        "two reference speakers, five hypothesis speakers (unmapped ones count as confusion or false alarm)",
        rttm(rows1("rec1", [("0", "5", "alice"), ("5", "5", "bob")])),
        rttm(rows1("rec1", [("0", "2.5", "a"), ("2.5", "2.2", "b"), ("5", "2.5", "c"), ("7.6", "2.4", "d"), ("10.5", "1.0", "e")])),
    )
    add(
        "09-empty-ref",
        "empty reference file: no reference speech, DER is 1.0 as soon as there is a false alarm; JER is 1.0",
        "",
        rttm(rows1("rec1", [("1.0", "2.0", "spk0"), ("4.0", "1.0", "spk1")])),
    )
    add(
        "10-empty-hyp",
        "empty hypothesis file: everything missed",
        rttm(rows1("rec1", [("0.5", "2", "alice"), ("3", "2", "bob")])),
        "",
    )
    add(
        "11-both-empty",
        "both files empty: no file at all; the overall values are those of zero components (DER 0.0, JER 1.0)",
        "",
        "",
    )
    add(
        "12-uem-restrict",
        "a UEM that scores [2, 9] only; speech outside it is ignored",
        rttm(rows1("rec1", [("0", "6", "alice"), ("5", "7", "bob")])),
        rttm(rows1("rec1", [("0", "5.5", "s0"), ("5.5", "6.5", "s1"), ("12.5", "2", "s2")])),
        "rec1 1 2.0 9.0\n",
    )
    add(
        "13-uem-multi-segment",
        "a UEM of several segments, two of them overlapping each other (its support is used)",
        rttm(rows1("rec1", [("0.0", "2.5", "alice"), ("2.5", "3.0", "bob"), ("6.0", "4.0", "alice"), ("10.5", "2.0", "bob")])),
        rttm(rows1("rec1", [("0.2", "2.0", "h1"), ("2.2", "3.5", "h2"), ("5.9", "4.4", "h1"), ("10.2", "1.3", "h1"), ("11.5", "1.0", "h2")])),
        "rec1 1 0.0 3.0\nrec1 1 2.0 4.0\nrec1 1 5.0 10.0\nrec1 1 11.0 13.0\n",
    )
    add(
        "14-multi-file",
        "several files in one RTTM: rec_c only in the reference, rec_d only in the hypothesis",
        rttm(
            rows1("rec_a", [("0.0", "3.0", "alice"), ("3.0", "2.0", "bob"), ("5.5", "1.5", "alice")])
            + rows1("rec_b", [("1.0", "4.0", "carol")])
            + rows1("rec_c", [("0.0", "2.0", "dave"), ("2.0", "2.0", "erin")])
        ),
        rttm(
            rows1("rec_b", [("0.5", "4.0", "spk0"), ("4.5", "1.0", "spk1")])
            + rows1("rec_a", [("0.1", "2.8", "spk0"), ("2.9", "2.2", "spk1"), ("5.4", "1.7", "spk0")])
            + rows1("rec_d", [("0.0", "1.0", "spk0")])
        ),
    )

    rng = random.Random(20261130)
    ref15 = random_conversation(rng, "meeting", [f"S{k}" for k in range(7)], 120.0, mean_turn=2.5, overlap_prob=0.25)
    hyp15 = perturb(rng, ref15, {f"S{k}": f"spk{k + 2}" for k in range(7)}, jitter=0.3, length=120.0)
    hyp15 += [(round(rng.uniform(0, 118), 3), round(rng.uniform(0.3, 2.0), 3), spk) for spk in ["spk0", "spk1"] for _ in range(3)]
    add(
        "15-many-speakers",
        "7 reference and 9 hypothesis speakers, 120 s, random (seeded): the Hungarian mapping is not trivial",
        rttm(rows1("meeting", ref15)),
        rttm(rows1("meeting", hyp15)),
    )
    ref16 = random_conversation(rng, "panel", [f"p{k}" for k in range(8)], 90.0, mean_turn=2.0, overlap_prob=0.2)
    names16 = {f"p{k}": f"h{k % 3}" for k in range(8)}
    hyp16 = perturb(rng, ref16, names16, jitter=0.2, length=90.0)
    add(
        "16-more-ref-than-hyp",
        "8 reference speakers, 3 hypothesis speakers, random (seeded)",
        rttm(rows1("panel", ref16)),
        rttm(rows1("panel", hyp16)),
    )
    add(
        "17-tiny-segments",
        "segments shorter than a collar, and a zero-duration line (ignored by pyannote)",
        rttm(rows1("rec1", [("1.0", "0.1", "alice"), ("1.2", "0.05", "bob"), ("2.0", "2.0", "alice"), ("4.0", "0.0", "bob"), ("6.0", "0.2", "carol"), ("6.3", "1.0", "alice")])),
        rttm(rows1("rec1", [("0.95", "0.2", "s0"), ("1.9", "2.2", "s1"), ("6.05", "0.1", "s2"), ("7.0", "0.01", "s3"), ("6.3", "0.9", "s1")])),
    )
    add(
        "18-touching-same-speaker",
        "adjacent (touching) segments of one speaker, split at different places on both sides",
        rttm(rows1("rec1", [("0", "1", "alice"), ("1", "1", "alice"), ("2", "1.5", "alice"), ("3.5", "1", "bob"), ("4.5", "0.5", "alice")])),
        rttm(rows1("rec1", [("0", "1.5", "s0"), ("1.5", "2.0", "s0"), ("3.5", "0.5", "s1"), ("4.0", "0.5", "s1"), ("4.5", "0.5", "s0")])),
    )
    add(
        "19-self-overlap",
        "a speaker overlapping itself in the reference, a duplicated reference line, and self-overlap in the "
        "hypothesis: pyannote keeps one track per RTTM line, so such regions count twice",
        rttm(rows1("rec1", [("0", "3", "alice"), ("2", "3", "alice"), ("5", "2", "bob"), ("5", "2", "bob"), ("8", "1", "carol")])),
        rttm(rows1("rec1", [("0", "5", "s0"), ("5", "2", "s1"), ("6", "1", "s1"), ("7.5", "2", "s2")])),
    )
    add(
        "20-many-decimals",
        "boundaries with many decimals (end = start + duration in f64, e.g. 0.1 + 0.2)",
        rttm(rows1("rec1", [("0.1", "0.2", "spk_a"), ("0.3", "1.987654321", "spk_b"), ("2.111111111", "0.333333333", "spk_a"), ("2.444444444", "3.1415926535", "spk_b"), ("5.5859", "0.0000001", "spk_a")])),
        rttm(rows1("rec1", [("0.09999999999", "0.2000000001", "h1"), ("0.3000000000000001", "2.0123456789", "h2"), ("2.1000000001", "0.3456789012", "h1"), ("2.4567890123", "3.0999999999", "h2"), ("5.55", "0.123456789012345", "h1")])),
    )
    add(
        "21-sub-microsecond",
        "boundaries closer than pyannote's 1 us segment precision (slivers vanish, near-touching segments merge)",
        rttm(rows1("rec1", [("1.0", "1.0", "a"), ("2.0000005", "1.0", "b"), ("3.000002", "1.0", "a"), ("5.0", "0.0000008", "b"), ("6.0", "1.0", "b")])),
        rttm(rows1("rec1", [("1.0000004", "0.9999992", "x"), ("2.0", "1.0000003", "y"), ("3.000002", "0.0000008", "x"), ("3.5", "0.5", "x"), ("6.0000009", "0.9999991", "y")])),
    )
    ref22 = random_conversation(rng, "call", ["A", "B", "C", "D"], 60.0, mean_turn=4.0, overlap_prob=0.2)
    hyp22 = perturb(rng, ref22, {"A": "spk3", "B": "spk0", "C": "spk1", "D": "spk2"}, jitter=0.35, length=60.0)
    add(
        "22-random-long",
        "4 speakers, 60 s, random (seeded) reference and a perturbed hypothesis",
        rttm(rows1("call", ref22)),
        rttm(rows1("call", hyp22)),
    )
    ref23, hyp23, uem23 = [], [], ""
    for k, uri in enumerate(["day1", "day2", "day3"]):
        speakers = [f"{uri}_{s}" for s in "xyz"[: 2 + k % 2]]
        r = random_conversation(rng, uri, speakers, 40.0, mean_turn=3.0, overlap_prob=0.2)
        h = perturb(rng, r, {s: f"spk{i}" for i, s in enumerate(speakers)}, jitter=0.3, length=40.0)
        ref23 += rows1(uri, r)
        hyp23 += rows1(uri, h)
        lo = round(rng.uniform(0.0, 5.0), 3)
        uem23 += f"{uri} 1 {lo:.3f} {round(rng.uniform(25.0, 45.0), 3):.3f}\n"
    add(
        "23-random-multi-file-uem",
        "three files, random (seeded), each scored on a UEM segment",
        rttm(ref23),
        rttm(hyp23),
        uem23,
    )
    add(
        "24-collar-interplay",
        "boundaries closer than a collar (collars merge), a reference segment crossing the UEM end",
        rttm(rows1("rec1", [("0.1", "1.0", "a"), ("1.2", "0.3", "b"), ("1.6", "2.0", "a"), ("3.7", "0.2", "b")])),
        rttm(rows1("rec1", [("0.0", "1.3", "x"), ("1.3", "0.4", "y"), ("1.7", "2.5", "x")])),
        "rec1 1 0.0 3.0\n",
    )
    add(
        "25-silent-file-in-uem",
        "the UEM lists a file that neither RTTM has (scored as empty vs empty), next to a normal file",
        rttm(rows1("rec1", [("0.0", "4.0", "alice"), ("4.5", "3.0", "bob")])),
        rttm(rows1("rec1", [("0.3", "4.0", "s0"), ("4.3", "3.5", "s1")])),
        "rec1 1 0.0 10.0\nrec_silent 1 0.0 5.0\n",
    )
    names26 = ["Z", "a", "10", "9", "B"]
    ref26 = [(f"{3 * i:.1f}", "2.5", names26[i % 5]) for i in range(15)]
    hyp26 = [(f"{3 * i + 0.3 + 0.011 * i:.3f}", f"{1.9 - 0.037 * i:.3f}", f"spk{(7 * i) % 12}") for i in range(15)]
    add(
        "26-label-sorting",
        "speaker names whose string order differs from their numeric or case order, 12 hypothesis speakers (spk10 < spk2)",
        rttm(rows1("rec1", ref26)),
        rttm(rows1("rec1", hyp26)),
    )
    add(
        "27-hungarian-vs-greedy",
        "the greedy mapping (h1->A) is not the optimal one (h1->B, h2->A)",
        rttm(rows1("rec1", [("0", "5", "A"), ("5", "4", "B"), ("10", "4", "A")])),
        rttm(rows1("rec1", [("0", "9", "h1"), ("10", "4", "h2")])),
    )
    other_types = (
        "SPKR-INFO rec1 1 <NA> <NA> <NA> unknown alice <NA> <NA>\n"
        "SPKR-INFO rec1 1 <NA> <NA> <NA> unknown bob <NA> <NA>\n"
        "SPEAKER rec1 1 0.00 2.00 <NA> <NA> alice <NA> <NA>\n"
        "SPEAKER\trec1  1   2.00\t1.50 <NA> <NA> bob <NA> <NA>\n"
        "SPEAKER rec1 2 4.00 1.00 <NA> <NA> alice <NA> <NA>\n"
    )
    add(
        "28-rttm-other-types",
        "non-SPEAKER lines (SPKR-INFO, ignored), tabs and repeated spaces between fields, channel 2",
        other_types,
        rttm(rows1("rec1", [("0.10", "1.80", "1"), ("1.90", "1.70", "2"), ("4.00", "1.20", "1")])),
    )
    return cases
