package dev.baton.lock;

/**
 * A refusal the caller must see as a problem response: bad input, or a script that said no
 * (LOCK_LOST, DUPLICATE_REQUEST, ...). Carries only what may be shown to the caller.
 */
public class LockProblem extends RuntimeException {

    private final ProblemCode code;
    private final String field;
    private final String state;
    private final Integer attempt;
    private final String resultJson;

    private LockProblem(ProblemCode code, String detail, String field, String state, Integer attempt, String resultJson) {
        super(detail, null, false, false);
        this.code = code;
        this.field = field;
        this.state = state;
        this.attempt = attempt;
        this.resultJson = resultJson;
    }

    public static LockProblem of(ProblemCode code, String detail) {
        return new LockProblem(code, detail, null, null, null, null);
    }

    public static LockProblem invalid(String field, String detail) {
        return new LockProblem(ProblemCode.INVALID_REQUEST, detail, field, null, null, null);
    }

    public static LockProblem tooLarge(String field, String detail) {
        return new LockProblem(ProblemCode.PAYLOAD_TOO_LARGE, detail, field, null, null, null);
    }

    /** A refusal about an existing request, telling where that request stands. */
    public static LockProblem aboutRequest(ProblemCode code, String detail, String state, Integer attempt, String resultJson) {
        return new LockProblem(code, detail, null, state, attempt, resultJson);
    }

    public ProblemCode code() {
        return code;
    }

    public String field() {
        return field;
    }

    public String state() {
        return state;
    }

    public Integer attempt() {
        return attempt;
    }

    public String resultJson() {
        return resultJson;
    }
}
