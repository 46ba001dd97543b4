// Coalesced lookups (docs/decisions.md, P2 coalesced retrieval). A lookup that arrives while fewer
// than `inFlight` statements are out goes at once, alone (`one`): latency at low load is that of
// one statement. Lookups that arrive while `inFlight` statements are out wait, and when one of them
// returns, up to `maxGroup` of the waiting ones go together as ONE statement (`group`); the rest
// wait for the next. Under load most requests share a statement, and the database's cost per
// statement (protocol messages, snapshot, executor start-up) is paid once per group instead of
// once per request.
//
// The freshness rule: every lookup is answered by a statement that STARTED after the lookup
// arrived. A waiting lookup only ever joins a statement that has not been sent yet; a statement
// already out never takes another member, and no answer is shared between requests or kept after
// its statement returns. So a change committed (and acknowledged) before a request arrived is
// visible to the snapshot of the statement that answers it, exactly as with one statement per request.
//
// Errors: when a group's statement fails, each of its lookups is sent again alone (statements that
// also start after every lookup arrived), so one bad input or a dropped connection costs only the
// lookups it concerns; a lookup whose own statement fails is rejected with that error.

type Waiting<I, O> = { input: I; resolve: (output: O) => void; reject: (error: unknown) => void };

export function coalesce<I, O>(options: {
  one: (input: I) => Promise<O>;
  // The answers in the order of the inputs.
  group: (inputs: I[]) => Promise<O[]>;
  inFlight: number;
  maxGroup: number;
  // Told when a group's statement failed (its lookups are then sent again alone).
  onGroupError: (error: unknown, size: number) => void;
}): (input: I) => Promise<O> {
  const { one, group, inFlight, maxGroup, onGroupError } = options;
  const waiting: Waiting<I, O>[] = [];
  let out = 0;

  function sendNext(): void {
    while (out < inFlight && waiting.length > 0) {
      out++;
      void send(waiting.splice(0, maxGroup)).finally(returned);
    }
  }

  function returned(): void {
    out--;
    sendNext();
  }

  async function send(members: Waiting<I, O>[]): Promise<void> {
    if (members.length === 1) return settle(members[0]);
    let answers: O[];
    try {
      answers = await group(members.map((member) => member.input));
    } catch (error) {
      onGroupError(error, members.length);
      await Promise.all(members.map(settle));
      return;
    }
    for (const [i, member] of members.entries()) member.resolve(answers[i]);
  }

  async function settle(member: Waiting<I, O>): Promise<void> {
    try {
      member.resolve(await one(member.input));
    } catch (error) {
      member.reject(error);
    }
  }

  return (input) => {
    if (out < inFlight) {
      // Nothing waits when a slot is free (sendNext fills free slots at once).
      out++;
      return one(input).finally(returned);
    }
    return new Promise<O>((resolve, reject) => waiting.push({ input, resolve, reject }));
  };
}
