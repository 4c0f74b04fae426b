package bookinfo.reviews;

import java.io.PrintStream;
import java.time.Clock;
import java.util.function.LongSupplier;

/** The clocks and the stdout the service uses, replaceable so tests are deterministic. */
public record Hooks(Clock clock, LongSupplier nanoTime, PrintStream stdout) {

    public static Hooks system() {
        return new Hooks(Clock.systemUTC(), System::nanoTime, System.out);
    }
}
