exec(open('benchmarks/experiments/sweeps/common.py').read())
def kt(s, body): return "\n".join([s.title]*3 + [s.description]*2 + [" ".join(s.headings)] + [s.body[:body]])
K={}
for body in [3000, 20000]:
    K[f'bm{body}'] = L.BM25([kt(s,body) for s in skills]).matrix(qs)
s0,o0=sims('nd'); s1,o1=sims('sec600x8')
D={'nd':(dense('nd'),143), 'nd|lead':(combo('nd',['lead']),286),
   'nd|sec600-.05':(combo('nd',['sec600x8'],0.05),1231),
   'top2(nd+sec600)':(L.pooled(np.concatenate([s0,s1],1), np.concatenate([o0,o1]), N, 'top2'),1231),
   'nd|sec300x4-.05':(combo('nd',['sec300x4'],0.05),710)}
f=L.folds(queries)
for kn,(B,best) in K.items():
  for dn,(Dm,nt) in D.items():
    print(f'--- {dn} + {kn}')
    L.row('RRF k60 1:1', L.rrf([(1,Dm),(1,B)],60), queries, ids, nt)
    L.row('RRF k60 1:1 truncated(100 dense/50 kw)', L.rrf([(1,Dm),(1,B)],60, valid=[None,B>0]), queries, ids, nt)
    grid={('rrf',k,w):dict(k=k,w=w) for k in [5,10,20,30,60,100] for w in [0.5,0.67,1,1.5,2]}
    tot,info=L.cv(grid, lambda k,w: L.rrf([(w,Dm),(1,B)],k), queries, ids, f)
    print(f'   RRF cv over k,w: {L.fmt(tot)} picks {info["picks"]}')
    Bn=B/best[:,None]
    for nm in ['minmax','z']:
        grid={a:dict(a=a) for a in np.round(np.arange(0.1,0.95,0.1),2)}
        fn=lambda a: a*L.norm(Dm,nm)+(1-a)*L.norm(B,nm)
        tot,info=L.cv(grid, fn, queries, ids, f)
        allm={a:L.metrics(r,queries) for a,r in info['all'].items()}
        print(f'   convex {nm}: cv {L.fmt(tot)} picks {info["picks"]} | ' + ' '.join(f'{a}:{m["R@1"]:.3f}/{m["R@3"]:.3f}' for a,m in allm.items()))
    grid={a:dict(a=a) for a in [0.25,0.5,1,1.5,2,3,4]}
    fn=lambda a: Dm+a*Bn
    tot,info=L.cv(grid, fn, queries, ids, f)
    allm={a:L.metrics(r,queries) for a,r in info['all'].items()}
    print(f'   cos + a*bm25/best: cv {L.fmt(tot)} picks {info["picks"]} | ' + ' '.join(f'{a}:{m["R@1"]:.3f}/{m["R@3"]:.3f}' for a,m in allm.items()))
