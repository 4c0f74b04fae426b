# frozen_string_literal: true

module Details
  # The details API: which path is which route, and what each route answers.
  # Fills a WEBrick response and returns the route label used in /metrics.
  class Routes
    JSON_TYPE = "application/json"
    ALLOW = "GET, HEAD"

    # Everything after the id is the same for every book, as upstream.
    DETAILS_TAIL = ',"author":"William Shakespeare","year":1595,"type":"paperback",' \
                   '"pages":200,"publisher":"PublisherA","language":"English",' \
                   '"ISBN-10":"1234567890","ISBN-13":"123-1234567890"}'
    BAD_ID = '{"error":"please provide numeric product id"}'
    HEALTHY = '{"status":"Details is healthy"}'
    NOT_FOUND = '{"error":"not found"}'
    METHOD_NOT_ALLOWED = '{"error":"method not allowed"}'

    DETAILS_PATH = %r{\A/details(?:/([^/]*))?\z}.freeze
    # Decimal only, so "010" is ten (upstream's Integer() read it as octal 8),
    # and a sign is allowed as upstream did.
    NUMERIC_ID = /\A[+-]?[0-9]+\z/.freeze

    def initialize(metrics)
      @metrics = metrics
    end

    def serve(req, res)
      path = req.path
      route = route_of(path)
      if route == "unmatched"
        reply(res, 404, NOT_FOUND)
      elsif req.request_method != "GET" && req.request_method != "HEAD"
        res["Allow"] = ALLOW
        reply(res, 405, METHOD_NOT_ALLOWED)
      elsif route == "/details/:id"
        details(res, DETAILS_PATH.match(path)[1])
      elsif route == "/health"
        reply(res, 200, HEALTHY)
      else
        res.status = 200
        res.content_type = Metrics::CONTENT_TYPE
        res.body = @metrics.render
      end
      route
    end

    private

    # "*" and CONNECT targets have no path (nil): unmatched.
    def route_of(path)
      case path
      when "/health" then "/health"
      when "/metrics" then "/metrics"
      when DETAILS_PATH then "/details/:id"
      else "unmatched"
      end
    end

    def details(res, raw_id)
      if raw_id&.match?(NUMERIC_ID)
        # Integer#to_s drops leading zeros and "+", which a JSON number may not
        # carry; Ruby integers have no overflow, so huge ids echo exactly.
        reply(res, 200, "{\"id\":#{Integer(raw_id, 10)}#{DETAILS_TAIL}")
      else
        reply(res, 400, BAD_ID)
      end
    end

    def reply(res, status, body)
      res.status = status
      res.content_type = JSON_TYPE
      res.body = body
    end
  end
end
