exec(open('benchmarks/experiments/sweeps/common.py').read())
def kt(s, body): return "\n".join([s.title]*3 + [s.description]*2 + [" ".join(s.headings)] + [s.body[:body]])
def zf(Dm,B,a=0.5,nm='z'): return a*L.norm(Dm,nm)+(1-a)*L.norm(B,nm)
Bs={body: L.BM25([kt(s,body) for s in skills]).matrix(qs)[0] for body in [1000,2000,3000,5000,10000,20000]}
s0,o0=sims('nd'); s1,o1=sims('sec600x8')
D={'d':(dense('d'),143),'nd':(dense('nd'),143),'ndh':(dense('ndh'),143), 'nd|lead':(combo('nd',['lead']),286),'nd|h1-.05':(combo('nd',['h1'],.05),286),
   'nd|headx8-.1':(combo('nd',['headx8'],.1),1215),'nd|sec200x8-.05':(combo('nd',['sec200x8'],.05),1231),'nd|sec300x4-.05':(combo('nd',['sec300x4'],0.05),710),
   'nd|sec600x8':(combo('nd',['sec600x8'],0),1231),'nd|sec600x8-.05':(combo('nd',['sec600x8'],0.05),1231),
   'top2(nd+sec600)':(L.pooled(np.concatenate([s0,s1],1), np.concatenate([o0,o1]), N, 'top2'),1231)}
print('== dense variants, z-fusion 0.5 with bm25 body3000')
for dn,(Dm,nt) in D.items(): L.row(f'z.5 {dn}+bm3000', zf(Dm,Bs[3000]), queries, ids, nt)
print('== dense variants, minmax-fusion 0.5 with bm25 body3000')
for dn,(Dm,nt) in D.items(): L.row(f'mm.5 {dn}+bm3000', zf(Dm,Bs[3000],nm='minmax'), queries, ids, nt)
print('== body length, z 0.5, nd')
for b,B in Bs.items(): L.row(f'z.5 nd+bm{b}', zf(D['nd'][0],B), queries, ids, 143)
for b,B in Bs.items(): L.row(f'z.5 nd|sec600-.05+bm{b}', zf(D['nd|sec600x8-.05'][0],B), queries, ids, 1231)
print('== k1')
for k1 in [0.9,1.2,1.5,2.0]:
    B=L.BM25([kt(s,3000) for s in skills],k1).matrix(qs)[0]; L.row(f'z.5 nd+bm3000 k1={k1}', zf(D['nd'][0],B), queries, ids, 143)
print('== fields')
for nm,fn in [('t1d1',lambda s:"\n".join([s.title,s.description," ".join(s.headings),s.body[:3000]])),
              ('noheads',lambda s:"\n".join([s.title]*3+[s.description]*2+[s.body[:3000]])),
              ('t1d1 nohead',lambda s:"\n".join([s.title,s.description,s.body[:3000]]))]:
    B=L.BM25([fn(s) for s in skills]).matrix(qs)[0]; L.row(f'z.5 nd+bm3000 {nm}', zf(D['nd'][0],B), queries, ids, 143)
print('== weight a sweep, z, nd + bm3000, with cv')
f=L.folds(queries)
for dn in ['nd','nd|sec600x8-.05','nd|lead']:
    Dm=D[dn][0]
    for a in [0.3,0.4,0.5,0.6,0.7]: L.row(f'z a={a} {dn}+bm3000', zf(Dm,Bs[3000],a), queries, ids, D[dn][1])
    grid={a:dict(a=a) for a in [0.3,0.4,0.5,0.6,0.7]}
    tot,info=L.cv(grid, lambda a: zf(Dm,Bs[3000],a), queries, ids, f); print('   cv', L.fmt(tot), info['picks'])
