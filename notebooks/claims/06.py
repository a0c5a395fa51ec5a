"""Lesson 6's prose numbers: the Twitter window and its slides, Figure 1's totals, the slides
beside the paper's, the report's Figure 6 on a real and a random graph, read from what the
lesson printed; the papers' numbers quoted.  The prose describes the Twitter 24h run (the
default); without ../shared/data the lesson runs on CollegeMsg and these are not checked."""
from prose_claims import Claim, Exempt, Quote, about

REQUIRES_DATA = "twitter24h/twitter_24h.csv.gz"


def _window(nb):
    return nb.find(r"Twitter 24h: ([\d,]+) events, ([\d.]+) per second; the window \[(\d+), (\d+)\) s holds "
                   r"([\d,]+) distinct edges among ([\d,]+) users")


def _by_length(nb, length):
    row = nb.table("PAPER_SHARE = 0.00003")[f"{length} s"]
    return {k: float(v.rstrip("%")) for k, v in row.items()}


def _case(nb, case):
    table = nb.table("SLIDE_TABLE = pd.DataFrame", 0)
    column = {r: cols[next(c for c in cols if c.startswith(f"ours: {case}"))] for r, cols in table.items()}
    empty = column["empty iterations of the slide"].split()
    return {"length": int(column["slide"].split()[0]), "records": int(column["records in difference"]),
            "share": float(column["share of a prioritized run"].rstrip("%")), "empty": int(empty[0]), "rounds": int(empty[2])}


def _tail(nb, row):
    table = nb.table("def per_iteration(flow, epoch=0)", 0)
    key = next(k for k in table if k.startswith(row))
    return {int(i): int(v) for i, v in table[key].items()}


def _absolute(nb, graph, row):
    return nb.table("def per_iteration(flow, epoch=0)", 1)[row][next(c for c in nb.table(
        "def per_iteration(flow, epoch=0)", 1)[row] if c.startswith(graph))]


def _span(nb):
    return sum(length * count for length, count in nb.parameters["SLIDE_PLAN"])


def _implied(nb):
    """The paper's implied sizes: its prioritized run, stateless work, users (millions), and how
    many times our window's users."""
    run = 67 / 0.00003
    stateless = run / 0.04
    users = stateless / 23
    return run / 1e6, stateless / 1e6, users / 1e6, users / _window(nb)[5]


CLAIMS = [
    Quote("a minute that does about the paper's 67 records", "cidr", "only 67 differences are processed"),
    Quote("the one whose records come closest to the paper's 67", "cidr", "only 67 differences are processed"),
    Quote("on a 24-hour window of Twitter @mentions", "cidr", "a 24-hour window of Twitter’s messaging graph"),
    Quote("\"the graph formed by @username mentions in a 24-hour period on the Twitter online social network\"",
          "cidr", "the graph formed by @username mentions in a 24-hour period on the Twitter online social network"),
    Exempt("holds exactly 24 hours", "the file's span, 0 to 86,399 s (../shared/data/README.md)"),
    Claim("(130,360 events, anonymised ids", lambda nb: _window(nb)[0]),
    Exempt("the file is the 24 hours, so a 24-hour window", "the file's span and the paper's window length"),
    Claim("the window here is 24 hours less the seconds all our slides take (`SLIDE_PLAN`: 300 slides of 1 s, then "
          "150 of 2 s, 100 of 3 s and 10 of 60 s, 1,500 s in all, so the window is 23 h 35 min)",
          lambda nb: [24, *[x for length, count in nb.parameters["SLIDE_PLAN"] for x in (count, length)], _span(nb),
                      _window(nb)[3] // 3600, _window(nb)[3] % 3600 // 60]),
    Exempt("CollegeMsg (59,835 messages over 193 days, always installed) with a 30-day window",
           "the fallback dataset's size (ddlab.sources.collegemsg_pandas) and window, when Twitter 24h is absent"),
    Quote("a typical slide of 67 records is 0.003% of a prioritized run", "cidr",
          "only 67 differences are processed by the system (which is typical across the duration of the trace), "
          "and in several iterations no work needs to be done. The work done updating the sliding window is only "
          "0.003% of the work done in a full prioritized re-evaluation"),
    Claim("about 67 / 0.00003 = 2.2 million records; prioritized work is about 4% of stateless work, so stateless "
          "work was about 56 million records, and at one label per user per iteration over the roughly 23 iterations "
          "on its x axis that is about 2.4 million users (its y axis reaches 10^7)",
          lambda nb: [67, 0.00003, _implied(nb)[0], 4, _implied(nb)[1], 23, _implied(nb)[2], 10, 7]),
    Claim("24 hours were therefore about 50 times the window above", lambda nb: [24, about(_implied(nb)[3], 0.1)]),
    Claim("our file has 1.5 events per second", lambda nb: _window(nb)[1]),
    Exempt("entry 0 is the whole labelling", "the engine's numbering of iterations"),
    Quote("The paper's slide is one second of a 24-hour window, and it \"processes only 67 differences", "cidr",
          "when the initial 24-hour window slides by one second, that only 67 differences are processed"),
    Quote("(which is typical across the duration of the trace)\", 0.003% of a prioritized run", "cidr",
          "The work done updating the sliding window is only 0.003% of the work done in a full prioritized re-evaluation"),
    Claim("our stream is about 50 times thinner than the firehose", lambda nb: about(_implied(nb)[3], 0.1)),
    Claim("0.003% of our prioritized run is 1.4 records",
          lambda nb: [0.003, nb.find(r"of ours \(([\d,]+) records\) that is ([\d.]+) records")[1]]),
    Claim("we measure slides of 1, 2, 3 and 60 s", lambda nb: [length for length, _ in nb.parameters["SLIDE_PLAN"]]),
    Claim("at least the paper's share of a prioritized run, 0.003%", lambda nb: 0.003),
    Claim("(the median of those, 1 record:", lambda nb: _case(nb, "one-record")["records"]),
    Quote("about as many records as the paper's 67", "cidr", "only 67 differences are processed"),
    Quote("\"in several iterations no work needs to be done\" (iterations 3, 5 and after 11 of its slide)", "cidr",
          "several iterations of the differential computation (3, 5, and after 11) are completely empty"),
    Exempt("the bottom line marked 0 (a log axis has no zero)", "the chart's zero line"),
    Claim("The main case, a 3 s slide, typically does 2 records, 0.0042% of a prioritized run: the paper's share, "
          "0.003%, in order of magnitude, but 2 records rather than 67, because our window is about 50 times smaller. "
          "The one-record slide does 0.0021%",
          lambda nb: [_case(nb, "main")["length"], _case(nb, "main")["records"], _case(nb, "main")["share"], 0.003,
                      _case(nb, "main")["records"], 67, about(_implied(nb)[3], 0.1), _case(nb, "one-record")["share"]]),
    Claim("(5 of the main case's 7, the table says)", lambda nb: [_case(nb, "main")["empty"], _case(nb, "main")["rounds"]]),
    Claim("the typical 60 s slide does 41 records, 0.0853% of a run, and leaves 5 of its 11 rounds empty",
          lambda nb: [_case(nb, "typical")["length"], _case(nb, "typical")["records"], _case(nb, "typical")["share"],
                      _case(nb, "typical")["empty"], _case(nb, "typical")["rounds"]]),
    Claim("our window converges in 12 iterations, the paper's in about 23",
          lambda nb: [nb.find(r"incremental: (\d+) iterations"), 23]),
    Quote("nine runs on eight cores of a 48-core Opteron", "cidr", "48 (four 12-core) 1.9GHz processors"),
    Quote("text: 24.4 ms for one second of updates, \"substantially faster than the 7.1s and 36.4s used by either "
          "differential or incremental dataflow\"", "cidr", "Naiad is able to respond to one second of updates in 24.4ms; "
          "this is substantially faster than the 7.1s and 36.4s used by either differential or incremental dataflow"),
    Quote("The paper calls the 7.1 s differential", "cidr", "the 7.1s and 36.4s used by either differential or incremental"),
    Quote("the 24-hour differential computation", "cidr", "the one-second update is separated by fewer orders of "
          "magnitude from the 24-hour differential computation"),
    Quote("(about 400,000 nodes and 3.4 million edges,", "report",
          "which contains around 400,000 nodes and 3.4 million edges"),
    Claim("8.5 edges per node), records and processing time", lambda nb: 3.4e6 / 4e5),
    Quote("about 18 s for the first iteration, 5 ms for the final one, which processes 18 difference records", "report",
          "The processing time is around 18s for the first iteration, dropping to 5ms on the final iteration, which "
          "processes just 18 difference records"),
    Claim("the records fall from 50,642 at iteration 7 to 9,350, 4,938, 900, 274 and, at iteration 12, 14",
          lambda nb: [_tail(nb, "Twitter")[7], 7, *[_tail(nb, "Twitter")[i] for i in range(8, 12)], 12,
                      _tail(nb, "Twitter")[12] if max(_tail(nb, "Twitter")) == 12 else None]),
    Quote("ending in a handful of records as its final 18 do", "report", "which processes just 18 difference records"),
    Claim("On the random graph they fall from 28,488 at iteration 4 to 282",
          lambda nb: [_tail(nb, "random, Amazon density: records")[4], 4, _tail(nb, "random, Amazon density: records")[5]]),
    Claim("(14 records at iteration 12 for 7 users 12 hops from",
          lambda nb: [_tail(nb, "Twitter")[12], 12, _tail(nb, "Twitter 24h window (real): nodes")[12], 12]),
    Claim("puts every node within 5 hops of its smallest id",
          lambda nb: max(i for i, n in _tail(nb, "random, Amazon density: nodes").items() if n)),
    Claim("(1.6 edges per node,", lambda nb: float(_absolute(nb, "Twitter", "edges per node"))),
    Claim("has 2,752, 2,136, 325, 130 and 7 users at distances 8 to 12",
          lambda nb: [_tail(nb, "Twitter 24h window (real): nodes")[i] for i in range(8, 13)]
          + [8, max(i for i, n in _tail(nb, "Twitter 24h window (real): nodes").items() if n)]),
    Claim("the records do not double at round 1 (0.79 of round 0)",
          lambda nb: [1, float(_absolute(nb, "Twitter", "round 1 / round 0 records")), 0]),
    Claim("while on the random graph almost every node does (1.88)",
          lambda nb: float(_absolute(nb, "random", "round 1 / round 0 records"))),
    Exempt("Worked answer to 3.", "the exercise's number"),
]
