# Issue 27's create shape (as crest-bench --only shape) from Python, for profiling a server under
# callgrind: N creates from C TLS keep-alive HTTP/1.1 connections with the kubeconfig's client
# certificate. usage: shape_client.py DATA_DIR N C [crd]
# With WARM=K in the environment: K creates first, then "warm" on stderr, then waits for the
# file $WORK/go before the N measured creates (profile.sh zeroes callgrind's counters between).
import base64, http.client, json, os, random, ssl, string, sys, threading, re
d, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
kc = open(os.path.join(d, "kubeconfig")).read()
WORK = os.environ.get("WORK", os.path.dirname(d))
GO = os.path.join(WORK, "go")
def field(f):
    return base64.b64decode(re.search(f + r":\s*(\S+)", kc).group(1))
server = re.search(r"server:\s*(\S+)", kc).group(1)
host, port = server.replace("https://", "").split(":")
for f, name in [("certificate-authority-data", "ca"), ("client-certificate-data", "crt"), ("client-key-data", "key")]:
    open(os.path.join(WORK, f"{name}.pem"), "wb").write(field(f))
ctx = ssl.create_default_context(cafile=os.path.join(WORK, "ca.pem"))
ctx.load_cert_chain(os.path.join(WORK, "crt.pem"), os.path.join(WORK, "key.pem"))
ctx.check_hostname = False
COLL = "/apis/stable.example.com/v1/namespaces/default/crontabs"
CRD = r'''{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"]},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"cronSpec":{"type":"string","pattern":"^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},"image":{"type":"string"},"replicas":{"type":"integer","minimum":1,"maximum":10}}}}}}}]}}'''
def conn():
    return http.client.HTTPSConnection(host, int(port), context=ctx, timeout=600)
if len(sys.argv) > 4 and sys.argv[4] == "crd":
    h = conn()
    h.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD, {"Content-Type": "application/json"})
    r = h.getresponse(); print("crd", r.status, file=sys.stderr); r.read()
    import time
    while True:
        h.request("GET", COLL); r = h.getresponse(); r.read()
        if r.status == 200: break
        time.sleep(0.2)
    sys.exit(0)
def body(i):
    tmpl = '{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"generateName":"ct-","namespace":"default","annotations":{"bench.example.com/pad":"%s"}},"spec":{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":5}}'
    rnd = random.Random(i)
    pad = "".join(rnd.choice(string.ascii_letters) for _ in range(2624 - len(tmpl % "")))
    return tmpl % pad
lock = threading.Lock(); nxt = [0]; bad = [0]; OFF = [0]
conns = [conn() for _ in range(c)]
for h in conns: h.connect()
def run(h):
    while True:
        with lock:
            i = nxt[0]; nxt[0] += 1
        if i >= n: return
        h.request("POST", COLL, body(i + OFF[0]), {"Content-Type": "application/json", "Accept": "application/json"})
        r = h.getresponse(); r.read()
        if r.status != 201:
            with lock: bad[0] += 1
def phase(count):
    nxt[0] = 0
    global n
    n = count
    ts = [threading.Thread(target=run, args=(h,)) for h in conns]
    for t in ts: t.start()
    for t in ts: t.join()
warm = int(os.environ.get("WARM", "0"))
if warm:
    phase(warm)
    nbase = warm
    print("warm", file=sys.stderr, flush=True)
    import time
    while not os.path.exists(GO): time.sleep(0.1)
total = int(sys.argv[2])
base = warm
OFF[0] = base
phase(total)
print("done", total, "bad", bad[0], file=sys.stderr)
