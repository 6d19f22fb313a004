exec(open('benchmarks/experiments/sweeps/common.py').read())
def kt(s, body=3000): return "\n".join([s.title]*3 + [s.description]*2 + [" ".join(s.headings)] + [s.body[:body]])
bmo=L.BM25([kt(s) for s in skills]); B,best=bmo.matrix(qs)
Dm=dense('nd'); Bn=B/best[:,None]
F=0.5*L.norm(Dm,'z')+0.5*L.norm(B,'z')
order=np.argsort(-F,1); t1=order[:,0]; t2=order[:,1]; Q=len(qs)
feat={'cos_top1':Dm[np.arange(Q),t1],'cos_max':Dm.max(1),'bmn_top1':Bn[np.arange(Q),t1],'bmn_max':Bn.max(1),
      'fused_top1':F[np.arange(Q),t1],'margin':F[np.arange(Q),t1]-F[np.arange(Q),t2],
      'zdense_top1':L.norm(Dm,'z')[np.arange(Q),t1],'zbm_top1':L.norm(B,'z')[np.arange(Q),t1]}
cat=np.array(['none' if not q['expected'] else ('ok' if ids[t1[i]] in q['expected'] else 'wrong') for i,q in enumerate(queries)])
for n,v in feat.items():
    print(f'{n:12}', ' | '.join(f'{c}: min {v[cat==c].min():.3f} p10 {np.percentile(v[cat==c],10):.3f} med {np.median(v[cat==c]):.3f} max {v[cat==c].max():.3f}' for c in ['ok','wrong','none']))
import json
np.save('/tmp/feat.npy', np.stack(list(feat.values())))
# answerable r3 ranks
ans=cat!='none'
def curve(v, name):
    print('curve', name)
    for t in np.unique(np.round(np.quantile(v[cat=='none'],[0,0.25,0.5,0.75,1.0]).tolist()+np.quantile(v[ans],[0.02,0.05,0.1]).tolist(),3)):
        g=v>=t
        print(f'  t={t:.3f}: none answered {int((g&(cat=="none")).sum())}/12, answerable gated {int((~g&ans).sum())}/108, R@1 {int((g&(cat=="ok")).sum())/108:.3f}')
for n in ['cos_top1','cos_max','bmn_top1','fused_top1','margin']: curve(feat[n],n)
print('fine curve cos_max (gate: answer only if max dense cosine over name+description >= t)')
v=feat['cos_max']
for t in np.arange(0.14,0.32,0.02):
    g=v>=t
    print(f'  t={t:.2f}: none answered {int((g&(cat=="none")).sum())}/12, answerable silenced {int((~g&ans).sum())}/108, R@1 {int((g&(cat=="ok")).sum())/108:.3f}')
print('low-cos answerable:', [(queries[i]['qid'],round(float(v[i]),3),round(float(feat["bmn_max"][i]),3),cat[i]) for i in np.where(ans&(v<0.24))[0]])
print('none:', [(queries[i]['qid'],round(float(v[i]),3),round(float(feat["bmn_max"][i]),3)) for i in np.where(~ans)[0]])
f=L.folds(queries)
for tr,te in ((f[0],f[1]),(f[1],f[0])):
    tr=np.array(tr); te=np.array(te)
    def acc(t,idx):
        g=v[idx]>=t; c=cat[idx]; return (g&(c=='ok')).sum()+(~g&(c=='none')).sum()
    ts=np.round(np.arange(0.10,0.35,0.01),2); best_t=max(ts,key=lambda t:(acc(t,tr),-abs(t-0.2)))
    g=v[te]>=best_t; c=cat[te]
    print(f'fold: tuned t={best_t} -> test none answered {(g&(c=="none")).sum()}/{(c=="none").sum()}, answerable silenced {(~g&(c!="none")).sum()}/{(c!="none").sum()}, R@1 {(g&(c=="ok")).sum()/(c!="none").sum():.3f}')
