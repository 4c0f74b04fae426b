package bookinfo.reviews;

import org.apache.catalina.connector.Connector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;
import org.springframework.context.ConfigurableApplicationContext;

/** The first step of a drain, before Spring's graceful shutdown pauses the connector. */
final class TomcatDrain {

    private static final Logger log = LoggerFactory.getLogger(TomcatDrain.class);

    private TomcatDrain() {
    }

    static void begin(ConfigurableApplicationContext context) {
        context.getBean(DrainingResponses.class).begin();
        if (!(context instanceof WebServerApplicationContext web)
                || !(web.getWebServer() instanceof TomcatWebServer tomcat)) {
            return;
        }
        for (Connector connector : tomcat.getTomcat().getService().findConnectors()) {
            if (connector.getProtocolHandler() instanceof DrainableNio2Protocol protocol) {
                protocol.stopAccepting();
                log.info("stopped accepting; closed {} idle connections", protocol.closeIdleConnections());
            }
        }
    }
}
