exec(open('benchmarks/experiments/sweeps/common.py').read())
print("== dense alone")
for f in ['d','nd','ndh','h1','lead']: L.row(f'dense {f}', dense(f), queries, ids, ntexts(f))
for secs in [['sec600x8'],['sec200x8'],['sec300x4'],['headx8'],['lead'],['h1']]:
    for pen in [0,0.05,0.1]:
        L.row(f'max(nd, {secs[0]}-{pen})', combo('nd',secs,pen), queries, ids, ntexts('nd',*secs))
for secs in [['sec600x8'],['headx8'],['lead'],['h1']]:
    for pen in [0,0.05]:
        L.row(f'max(ndh, {secs[0]}-{pen})', combo('ndh',secs,pen), queries, ids, ntexts('ndh',*secs))
# mean of top-2 over nd + sections
s0,o0=sims('nd'); s1,o1=sims('sec600x8')
L.row('top2mean(nd+sec600x8)', L.pooled(np.concatenate([s0,s1],1), np.concatenate([o0,o1]), N, 'top2'), queries, ids, ntexts('nd','sec600x8'))
# average of nd and lead/h1
for f in ['lead','h1','sec600x8','headx8']:
    L.row(f'0.5nd+0.5 {f}(max)', 0.5*dense('nd')+0.5*np.maximum(dense(f),0), queries, ids, ntexts('nd',f))
print("== BM25 alone")
for sch in ['current','flat','nd','nd_x2','ndh','cur_body5k','cur_body2k','body']:
    B,best=bm(sch); L.row(f'bm25 {sch}', B, queries, ids)
for k1,b in [(1.2,0.3),(1.2,0.5),(0.9,0.4),(1.5,0.75),(2.0,0.75)]:
    B,best=bm('current',k1,b); L.row(f'bm25 current k1={k1} b={b}', B, queries, ids)
