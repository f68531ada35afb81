"""Exact emulation of torch's CPU `topk(largest=True, sorted=False)` index selection (torch 2.x,
aten/src/ATen/native/TopKImpl.h), i.e. of libstdc++'s std::nth_element / std::partial_sort on
(value, index) pairs with the comparator `a.value > b.value`. Only the SET of the k returned indices
matters to the speaker cache (boosts are scatter-adds, and the final selection is sorted), but ties at
the k-th value are resolved by where these algorithms happen to move elements, so they are emulated
step by step. Values must not be NaN (the cache scores never are); +-inf are fine.
"""


def _comp(a, b):          # "a goes before b" == a.value > b.value
    return a[0] > b[0]


def _lg(n):
    return n.bit_length() - 1


def _push_heap(q, first, hole, top, value):
    parent = (hole - 1) // 2
    while hole > top and _comp(q[first + parent], value):
        q[first + hole] = q[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[first + hole] = value


def _adjust_heap(q, first, hole, length, value):
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if _comp(q[first + second], q[first + second - 1]):
            second -= 1
        q[first + hole] = q[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        q[first + hole] = q[first + second - 1]
        hole = second - 1
    _push_heap(q, first, hole, top, value)


def _make_heap(q, first, last):
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(q, first, parent, length, q[first + parent])
        if parent == 0:
            return
        parent -= 1


def _pop_heap(q, first, last, result):
    value = q[result]
    q[result] = q[first]
    _adjust_heap(q, first, 0, last - first, value)


def _heap_select(q, first, middle, last):
    _make_heap(q, first, middle)
    for i in range(middle, last):
        if _comp(q[i], q[first]):
            _pop_heap(q, first, middle, i)


def _insertion_sort(q, first, last):
    if first == last:
        return
    for i in range(first + 1, last):
        if _comp(q[i], q[first]):
            val = q[i]
            q[first + 1:i + 1] = q[first:i]
            q[first] = val
        else:
            val = q[i]
            j = i
            while _comp(val, q[j - 1]):
                q[j] = q[j - 1]
                j -= 1
            q[j] = val


def _move_median_to_first(q, result, a, b, c):
    if _comp(q[a], q[b]):
        if _comp(q[b], q[c]):
            q[result], q[b] = q[b], q[result]
        elif _comp(q[a], q[c]):
            q[result], q[c] = q[c], q[result]
        else:
            q[result], q[a] = q[a], q[result]
    elif _comp(q[a], q[c]):
        q[result], q[a] = q[a], q[result]
    elif _comp(q[b], q[c]):
        q[result], q[c] = q[c], q[result]
    else:
        q[result], q[b] = q[b], q[result]


def _unguarded_partition(q, first, last, pivot):
    while True:
        while _comp(q[first], q[pivot]):
            first += 1
        last -= 1
        while _comp(q[pivot], q[last]):
            last -= 1
        if not first < last:
            return first
        q[first], q[last] = q[last], q[first]
        first += 1


def _introselect(q, first, nth, last, depth):
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        mid = first + (last - first) // 2
        _move_median_to_first(q, first, first + 1, mid, last - 1)
        cut = _unguarded_partition(q, first + 1, last, first)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(q, first, last)


def topk_indices(values, k):
    """Indices torch.topk(values, k, largest=True, sorted=False) returns on CPU, in its output order."""
    n = len(values)
    q = [(float(v), i) for i, v in enumerate(values)]
    if k == 0:
        return []
    if k * 64 <= n:                      # std::partial_sort: heap_select + sort_heap
        _heap_select(q, 0, k, n)
        # sort_heap only reorders the first k; emulate for the output order
        for last in range(k, 1, -1):
            _pop_heap(q, 0, last - 1, last - 1)
    else:                                # std::nth_element(begin, begin + k - 1, end)
        _introselect(q, 0, k - 1, n, 2 * _lg(n))
    return [i for _, i in q[:k]]
