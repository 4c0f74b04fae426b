# frozen_string_literal: true

require "webrick"

module Details
  # The details API as WEBrick servlets, one per mounted path, each setting req.attributes[:route].
  module Servlets
    JSON_TYPE = "application/json"
    ALLOW = "GET, HEAD"
    NOT_FOUND = '{"error":"not found"}'
    METHOD_NOT_ALLOWED = '{"error":"method not allowed"}'

    # One route on a path prefix, path_matches? deciding what is its own. 404 and 405 are ordinary
    # answers (WEBrick's MethodNotAllowed closes and sends no Allow); HEAD goes to do_GET.
    class Route < WEBrick::HTTPServlet::AbstractServlet
      def service(req, res)
        return json(res, 404, NOT_FOUND) unless path_matches?(req.path_info)

        req.attributes[:route] = self.class::ROUTE
        return super if req.request_method == "GET" || req.request_method == "HEAD"

        res["Allow"] = ALLOW
        json(res, 405, METHOD_NOT_ALLOWED)
      end

      private

      # Only the mounted path itself, by default.
      def path_matches?(path_info) = path_info.empty?

      def json(res, status, body)
        res.status = status
        res.content_type = JSON_TYPE
        res.body = body
      end
    end

    # GET /details/<id>
    class Details < Route
      ROUTE = "/details/:id"
      TAIL = ',"author":"William Shakespeare","year":1595,"type":"paperback",' \
             '"pages":200,"publisher":"PublisherA","language":"English",' \
             '"ISBN-10":"1234567890","ISBN-13":"123-1234567890"}'
      BAD_ID = '{"error":"please provide numeric product id"}'
      # Decimal only ("010" is ten), with an optional sign as upstream.
      NUMERIC_ID = /\A[+-]?[0-9]+\z/

      def do_GET(req, res)
        raw_id = req.path_info.delete_prefix("/")
        if raw_id.match?(NUMERIC_ID)
          # A JSON number carries no leading zeros or "+"; huge ids echo exactly.
          json(res, 200, "{\"id\":#{Integer(raw_id, 10)}#{TAIL}")
        else
          json(res, 400, BAD_ID)
        end
      end

      private

      # /details, /details/ and /details/<one segment>; /details/1/2 is 404.
      def path_matches?(path_info) = !path_info.delete_prefix("/").include?("/")
    end

    # GET /health
    class Health < Route
      ROUTE = "/health"
      HEALTHY = '{"status":"Details is healthy"}'

      def do_GET(_req, res) = json(res, 200, HEALTHY)
    end

    # GET /metrics; mounted with the server's Details::Metrics as option.
    class Metrics < Route
      ROUTE = "/metrics"

      def do_GET(_req, res)
        metrics = @options.first
        res.status = 200
        res.content_type = metrics.content_type
        res.body = metrics.render
      end
    end

    # Mounted on "/": every path no other mount claims.
    class NotFound < Route
      def service(_req, res) = json(res, 404, NOT_FOUND)
    end
  end
end
