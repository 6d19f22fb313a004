exec(open('benchmarks/experiments/sweeps/common.py').read())
def kt(s, body=3000): return "\n".join([s.title]*3 + [s.description]*2 + [" ".join(s.headings)] + [s.body[:body]])
bmo=L.BM25([kt(s) for s in skills]); B,best=bmo.matrix(qs)
Dm=dense('nd')
def zpool(S, C):
    out=np.empty_like(S,dtype=np.float64)
    for q in range(S.shape[0]):
        top=np.sort(S[q])[::-1][:C]
        mu,sd=top.mean(),max(top.std(),1e-9)
        out[q]=(np.maximum(S[q],top[-1])-mu)/sd
    return out
for C in [10,20,50,100,143]:
    L.row(f'z-over-top{C} nd+bm3000', 0.5*zpool(Dm,C)+0.5*zpool(B,C), queries, ids, 143)
# z over the full set but BM25 only on positive scores?
