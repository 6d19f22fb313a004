exec(open('benchmarks/experiments/sweeps/common.py').read())
def kt(s, reps_t=3, reps_d=2, body=20000, heads=True):
    return "\n".join([s.title]*reps_t + [s.description]*reps_d + ([" ".join(s.headings)] if heads else []) + [s.body[:body]])
import itertools
for body in [0, 1000, 2000, 3000, 5000, 10000, 20000]:
  for k1 in [1.2, 2.0]:
    for rt,rd in [(3,2),(1,1),(2,2)]:
        b=L.BM25([kt(s,rt,rd,body) for s in skills],k1).matrix(qs)[0]
        L.row(f'bm25 t{rt}d{rd} body{body} k1={k1}', b, queries, ids)
