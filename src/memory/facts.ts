// Reads what people say for what is worth remembering: the name they give, facts they tell about themselves, and a request to forget them.

/** What one utterance tells the memory. */
export interface Heard {
  /** The name the speaker gave ("my name is Ada", "call me Ada"). */
  name?: string;
  /** Statements the speaker made about themselves, as said (first person). */
  facts: string[];
  /** The speaker asked the robot to forget what they told it. */
  forget: boolean;
}

const NAME = /\b(?:my name is|my name's|i am called|i'm called|call me|people call me)\s+([\p{L}][\p{L}'-]*(?:\s+[\p{Lu}][\p{L}'-]*)?)/iu;
/** "I'm Ada" / "I am Ada Lovelace" as a whole clause: a capitalised word after it is a name. */
const I_AM_NAME = /^(?:[Ii] am|[Ii]'m)\s+(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)?)\s*[.!]?$/u;
/** Words that follow "my name is" in speech but are not names. */
const NOT_NAMES = new Set(['not', 'a', 'the', 'actually', 'just', 'really', 'so', 'very', 'what', 'and', 'but', 'is']);

const FORGET = [
  /\bforget\s+(?:what|everything|all|anything)\b.*\b(?:i|we)\b.*\b(?:told|said|say|tell)\b/i,
  /\bforget\s+(?:about\s+)?(?:me|my name|everything about me|all about me)\b/i,
  /\b(?:delete|erase|remove)\s+(?:what|everything|all)\b.*\b(?:you know|i told|i said)\b/i,
  /\b(?:delete|erase|remove)\s+my\s+(?:data|memories|facts|information)\b/i,
];

/** A clause about the speaker: starts with I, I'm, I've, my... */
const ABOUT_ME = /^(?:and\s+|but\s+|also\s+|so\s+|well,?\s+)?(?:i|i'm|i am|i've|i have|i'd|my|mine|we|we're|our)\b/i;
/** A clause that asks, or tells the robot what to do now, rather than telling about the speaker. */
const NOT_A_FACT =
  /\b(?:you|your|yourself|robot)\b|^(?:and\s+|but\s+)?i\s+(?:wonder|want you|need you|would like you|think so|don't know|do not know|guess|mean|see|said|told|forgot)\b|\b(?:forget|remember)\b|\?$/i;
const QUESTION_START = /^(?:what|when|where|who|why|how|which|whose|do|does|did|is|are|was|were|can|could|would|should|will|shall|may)\b/i;

/** Splits speech into clauses at sentence ends and at ", and" style joins. */
function clauses(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|\n+/)
    .flatMap((s) => s.split(/,?\s+(?:and|but|so)\s+(?=(?:i|i'm|my)\b)/i))
    .map((s) => s.replace(GREETING, '').trim())
    .filter(Boolean);
}

/** A greeting before what someone says about themselves ("Hi, I'm..."). */
const GREETING = /^(?:hi|hello|hey|good (?:morning|afternoon|evening)|well|so|oh|ok|okay)\b[,!.]?\s*/i;

/** Capitalises each part of a name said in lower case ("ada lovelace" -> "Ada Lovelace"). */
const capitalise = (name: string) =>
  name
    .split(/\s+/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join(' ');

/** What `text` (one or more utterances) tells the memory. */
export function readHeard(text: string): Heard {
  const heard: Heard = { facts: [], forget: FORGET.some((re) => re.test(text)) };
  if (heard.forget) return heard;
  const named =
    NAME.exec(text) ??
    clauses(text)
      .map((c) => I_AM_NAME.exec(c))
      .find(Boolean);
  if (named) {
    const parts = named[1]!.split(/\s+/);
    // A second word is part of the name only when it is capitalised as a name ("Ada Lovelace", not "Ada and").
    const name = parts.filter((p, i) => i === 0 || /^\p{Lu}/u.test(p)).join(' ');
    if (!NOT_NAMES.has(parts[0]!.toLowerCase())) heard.name = capitalise(name);
  }
  for (const clause of clauses(text)) {
    const c = clause.replace(/^["'“”]+|["'“”]+$/g, '').trim();
    if (!ABOUT_ME.test(c) || NOT_A_FACT.test(c) || QUESTION_START.test(c) || NAME.test(c) || I_AM_NAME.test(c)) continue;
    if (c.split(/\s+/).length < 3) continue;
    heard.facts.push(c.replace(/[.!;]+$/, ''));
  }
  return heard;
}
