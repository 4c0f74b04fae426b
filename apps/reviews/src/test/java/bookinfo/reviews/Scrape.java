package bookinfo.reviews;

import java.util.LinkedHashMap;
import java.util.Map;

/** The samples of a Prometheus text scrape, by series ("name{labels}"), for assertions. */
public final class Scrape {

    private Scrape() {}

    public static Map<String, Double> samples(String text) {
        Map<String, Double> samples = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
        return samples;
    }
}
