package shop;

class Forms {
    String handle(Request request) {
        if (request instanceof HttpEntityEnclosingRequest) {
            return "form";
        }
        return "page";
    }
}
