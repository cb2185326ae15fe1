# Compares the "Per problem" tables (strict, best sample per problem) of two kbv report --md files:
# outcome, correct/samples, best sample, flags and memory ratio must match; speedup CIs are tested for overlap.
# Used for session 10 (whose DB was not kept) against session 20.
import sys,re
def rows(path):
    t=open(path).read().split("## Per problem")[1].split("\n## ")[0]
    out={}
    for line in t.splitlines():
        if not line.startswith("| demo"): continue
        c=[x.strip() for x in line.strip("|").split("|")]
        out[(c[0],c[1],c[2])]=dict(name=c[3],cs=c[4],best=c[5],outcome=c[6],sp=c[7],ci=c[8],kms=c[10],bms=c[11],mem=c[14],flags=c[15])
    return out
a=rows(sys.argv[1]); b=rows(sys.argv[2])
print(f"problems: {len(a)} vs {len(b)}; in one report only: {sorted(set(a)^set(b)) or 'none'}")
print("run level id problem match outcome flags | speedup CI -> speedup CI | CIs | kernel ms a b | baseline ms a b")
for k in sorted(a, key=lambda k: (k[0], int(k[1]), int(k[2]))):
    x,y=a[k],b[k]
    same=all(x[f]==y[f] for f in("cs","best","outcome","flags","mem"))
    ci=""
    if x["ci"]:
        lo,hi=map(float,re.findall(r"[\d.]+",x["ci"])); lo2,hi2=map(float,re.findall(r"[\d.]+",y["ci"]))
        ci="overlap" if lo<=hi2 and lo2<=hi else "APART"
    print(*k,x["name"],"same" if same else "DIFF",x["outcome"],x["flags"],x["sp"],x["ci"],"->",y["sp"],y["ci"],ci,x["kms"],y["kms"],x["bms"],y["bms"])
