import sys, numpy as np
sys.path.insert(0, 'benchmarks/experiments')
import routing_lab as L
skills, queries = L.load(L.DEFAULT_SET)
ids=[s.id for s in skills]; N=len(skills)
c = L.EmbCache()
qs=[q['query'] for q in queries]
Qv = c.get(qs)
V={fam: L.family_vectors(c, skills, fam) for fam in L.FAMILIES}
def sims(fam):
    v,o,n=V[fam]; return Qv@v.T, o
def dense(fam, how='max'):
    s,o=sims(fam); return L.pooled(s, o, N, how)
def combo(primary, secs, pen=0.0, how='max'):
    p=dense(primary)
    if not secs: return p
    s=np.max([dense(f, how) for f in secs],0) if how=='max' else dense(secs[0],how)
    s=np.where(s<=-1, -1, s-pen)
    return np.maximum(p, s)
def ntexts(*fams): return sum(V[f][2] for f in fams)
BM={}
def bm(scheme, k1=1.2, b=0.75):
    key=(scheme,k1,b)
    if key not in BM:
        BM[key]=L.BM25([L.keyword_text(s,scheme) for s in skills],k1,b).matrix(qs)
    return BM[key]
none=[i for i,q in enumerate(queries) if not q['expected']]
